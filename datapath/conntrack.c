/*
 * Connection tracking: the tracker behind ct().
 *
 * What it is for
 * --------------
 * ct() looks a packet up in a table of connections, per zone, and tells
 * the pipeline what the packet is to its connection (ct_state: new,
 * established, related, reply, invalid), the connection's mark and label
 * and its original direction's tuple; ct(commit) enters new connections.
 * The semantics are Open vSwitch 3.1's userspace tracker (lib/conntrack.c
 * process_one(), conn_key_extract(), write_ct_md(); conntrack-other.c,
 * conntrack-icmp.c; conntrack-tcp.c, pf's window tracking, in
 * datapath/conntrack-tcp.c), the timeouts its defaults (overridden per
 * zone by timeout policies), and its NAT (nat_get_unique_tuple(),
 * nat_packet() and the ICMP errors' inner headers).  Fragments are
 * reassembled before the tracker sees them (datapath/ipf.c).  Not yet:
 * ALG helpers, and the cached-connection shortcut Open vSwitch takes for
 * a second ct() in the same zone.
 *
 * Design
 * ------
 * Records.  A connection is a fixed-size 96-byte record (struct
 * fdp__ct_conn, conntrack-private.h) in one array reserved up front for
 * the tracker's capacity (mmap, so untouched pages cost nothing) and
 * named by a 32-bit id; an IPv6 connection's addresses go to a parallel
 * array of 64-byte extensions.  Free ids: pmds take them 32 at a time
 * from a shared stack (and, before it has any, from the never-used
 * range, so that memory is touched in order) into a private cache of 64.
 *
 * Index.  One hash table for both directions: each connection is entered
 * twice, under its original tuple and under its reply tuple.  A bucket is
 * one cache line: a lock word, an overflow count and 7 slots of 64 bits,
 * each the tuple's 32-bit hash (the signature) and (id * 2 + direction)
 * + 1 (0 is a free slot).  A tuple lives in its home bucket, chosen by
 * the hash, or, when that is full, in one of the next CT_MAX_PROBE - 1;
 * every bucket it passes over counts it in 'overflow', so a lookup stops
 * at the first bucket whose count is zero.  There is no wrap-around: the
 * array has CT_MAX_PROBE - 1 spare buckets at the end.  At capacity the
 * table holds 5 entries per bucket on average (2 per connection, so
 * 2 * 64 / 5 = 25.6 bytes of index per connection).
 *
 * Lookups take no lock.  Slots are written with compare-and-swap and read
 * with acquire loads; a record is fully written before the release that
 * publishes its slot, and its identity (tuples, zone, protocol) does not
 * change until it is reclaimed, which waits for an RCU grace period after
 * both slots are cleared.  A lookup is one RCU read-side section per
 * batch.  A record found expired or dead is skipped, as Open vSwitch's
 * conn_key_lookup() skips expired ones.
 *
 * Writers.  Entering a connection takes the locks of the home buckets of
 * its two tuples (in address order), checks under them that neither
 * tuple is already there, claims a free slot for each by CAS, publishes,
 * and unlocks.  Every insert of a tuple holds its home bucket's lock, so
 * two pmds committing the same connection (even from its two directions)
 * cannot both succeed; inserts with other homes do not wait.  Removing
 * one (expiry, flush, force, a TCP connection reopened) claims it with a
 * CAS of 'dead', takes the same two locks, clears both slots, and pushes
 * the id on a lock-free reclaim list; fdp__ct_sweep() and fdp__ct_flush()
 * empty that list after a grace period.  No packet ever waits for a
 * reader, and a writer waits only for another writer of the same bucket
 * for the length of one insert or one removal.
 *
 * State updates.  An established UDP or "other" connection (both
 * directions seen) and an answered ICMP one need only a new expiry: a
 * relaxed store, no lock.  Everything else (state changes, TCP window
 * tracking, mark and label writes) takes the record's spinlock byte, so
 * two pmds receiving the two directions of one TCP connection agree on
 * its windows.
 *
 * Expiry is driven by the owner: fdp__ct_sweep() looks at a bounded
 * number of records per call.  The owner (the datapath's housekeeping
 * thread) chooses the slice and the pace, tests drive it with a fake
 * clock, and nothing in the tracker starts threads of its own.  A sweep
 * never holds a lock a pmd waits on for longer than one removal.
 *
 * Limits: total and per zone (a zone's own limit, else the default zone
 * limit), checked before a commit against shared atomic counters that a
 * commit and a removal update; several pmds committing at once may each
 * pass the check, so a limit can be exceeded by at most one connection
 * per pmd.
 *
 * What each pmd owns: its struct fdp__ct_pmd (counters, free-id cache,
 * NAT's random generator).
 * Shared: the records, the index, the counters of connections per zone
 * and in total, the free-id stack (a mutex, taken once per 32 commits)
 * and the reclaim list.
 *
 * Memory per connection at capacity: IPv4 96 (record) + 25.6 (index) + 4
 * (free-id stack) = 126 bytes; IPv6 190 (the 64-byte extension).  The
 * arrays are reserved at creation (MAP_NORESERVE) and asked for huge
 * pages, since every lookup lands on a random bucket and record.
 *
 * Cache lines per packet, on paper (IPv4, established, batch prefetched):
 * the home bucket (1); the record's first 64 bytes, which hold what UDP
 * and ICMP use (1, or 2 for the odd-numbered records, which start at the
 * middle of a line); TCP also reads the peers at bytes 64-87 (1 more).
 * IPv6 adds the 64-byte extension (1).  The zone counters are touched
 * only by commits and removals.  Open vSwitch's cmap takes a bucket, the
 * conn and its key, and its conn lock for every packet.
 *
 * NAT.  A record keeps its reply tuple apart from its original one, so a
 * translated connection is one whose reply tuple is not the original's
 * reverse: the translated side is in the reply tuple (SNAT: its
 * destination address and port; DNAT: its source), and two bits of the
 * record's identity byte say which side ('nat'), since Open vSwitch sets
 * +snat or +dnat by the action, even when the chosen tuple happens to be
 * the packet's own.  The record stays 96 bytes.  A commit with
 * nat(src=...) or nat(dst=...) plans its candidates as Open vSwitch
 * does (one address, hashed from the range and the connection; then a
 * port search: at most 128 ports in order from a hashed point or from
 * the packet's own port, then halving rounds from random points, 248
 * candidates at most) and claims each candidate by the same check-and-
 * insert under the two home buckets' locks that refuses a taken tuple
 * to any commit: the first candidate whose reply tuple is free is
 * entered, atomically with the original tuple, so two pmds never get
 * the same reply tuple and neither waits for anything but the one bucket
 * they both try.  A lock-free look at each candidate first skips most
 * taken ones without a lock; the random restarts come from each pmd's
 * own generator.  No candidate free: the commit fails and the packet
 * stays +new, as in Open vSwitch.  Rewriting (nat_packet()) writes the
 * addresses and ports of the other direction's tuple with incremental
 * checksum updates (RFC 1624; a UDP checksum of zero stays zero); an ICMP
 * error gets its outer address and the quoted packet's address and ports
 * translated the other way, the quoted IPv4 header's checksum and the
 * quoted transport checksum (when quoted whole) updated, and the ICMP
 * checksum recomputed.  Plain "nat" on a commit sets up no translation
 * (Open vSwitch 3.1 then stores a reply tuple with address zero, which
 * no reply matches: a bug not copied).  Not copied either: the lookup by
 * the ct_orig_tuple fields (check_orig_tuple()) for a translated packet
 * whose reverse is not found.
 *
 * New connections.  The index's pages are made resident off the packet
 * path (fdp__ct_populate()): every commit lands on two random buckets, so
 * a lazily faulted index costs the first pmds a fault per page (2 MiB
 * clears with huge pages).  A packet whose home bucket has no signature
 * match is likely new: if it may commit, phase 2 of a batch computes its
 * reply tuple (or, for NAT, the first candidate) and prefetches that
 * home bucket and the record it will get, so that a batch's commits
 * overlap their misses as its lookups do.
 *
 * Worked example
 * --------------
 * 10.0.0.1:1000 -> 10.0.0.2:53 UDP in zone 5, committed: its original
 * tuple's key words are { 0x0a0000010a000002, 0x03e8003500051104 } (ports,
 * zone 5, protocol 17, family 4); say they hash to 0x9e3779b9 and, with
 * 1000 buckets, home bucket (0x9e3779b9 * 1000) >> 32 = 618.  The reply
 * tuple { 0x0a0000020a000001, 0x003503e800051104 } hashes elsewhere, say
 * bucket 17.  The pmd takes id 0 from its cache, writes record 0 (both
 * tuples, expiry now + 60 s: OTHER_FIRST), locks buckets 17 and 618,
 * finds neither tuple, CASes slot 0 of bucket 618 to 0x9e3779b9_00000001
 * (id 0, direction 0) and a free slot of bucket 17 to ..._00000002
 * (direction 1), and unlocks.  The packet is +new+trk.  The answer
 * 10.0.0.2:53 -> 10.0.0.1:1000 builds the reply tuple's key, finds bucket
 * 17's slot by signature, checks record 0's direction-1 tuple, and as the
 * connection's state is OTHER_FIRST takes its lock, moves it to
 * OTHER_BIDIR with expiry now + 30 s: +est+rpl+trk.  Later packets of
 * either direction only store the expiry.
 */
#include <config.h>

#include "datapath/conntrack.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
#include <emmintrin.h>
#define CT_SIMD_SCAN 1
#endif

#include <flowdp/hash.h>

#include "datapath/bytes.h"
#include "datapath/conntrack-private.h"
#include "datapath/execute.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/util.h"

/* Slots per bucket: a 64-byte line less the lock and overflow words. */
#define CT_SLOTS 7

/* How many buckets a tuple may be displaced over (its home and the next
 * fifteen): bounds the work of one lookup, as DESIGN.md asks of every
 * hash table (a lookup stops earlier, at the first bucket nothing has
 * overflowed from, so the bound costs nothing in the common case).  At 5
 * of 7 slots used on average (Poisson: 13% of buckets overflow), 8
 * buckets lost 4 commits in 10,000 of a full million-connection table to
 * "no room"; 16 make that vanishingly rare. */
#define CT_MAX_PROBE 16

/* Average entries per bucket at capacity (see the essay). */
#define CT_LOAD 5

/* Packets processed per phase of a batch (the datapath's batch). */
#define CT_BATCH 32

/* Free ids a pmd keeps, and takes from the shared stack at once. */
#define CT_PMD_CACHE 64
#define CT_PMD_REFILL 32

/* Records per slice of a flush or a dump between grace periods. */
#define CT_SLICE 1024

#define N_ZONES 65536

/* Other protocols' states (conntrack-other.c) and ICMP's
 * (conntrack-icmp.c). */
enum { CT_OTHER_FIRST, CT_OTHER_MULTIPLE, CT_OTHER_BIDIR };
enum { CT_ICMP_FIRST, CT_ICMP_REPLY };

/* Default timeouts in seconds, see conntrack.h. */
static const uint32_t ct_default_timeouts[FDP__CT_N_TM] = {
    [FDP__CT_TM_TCP_FIRST_PACKET] = 30,
    [FDP__CT_TM_TCP_OPENING] = 30,
    [FDP__CT_TM_TCP_ESTABLISHED] = 24 * 60 * 60,
    [FDP__CT_TM_TCP_CLOSING] = 15 * 60,
    [FDP__CT_TM_TCP_FIN_WAIT] = 45,
    [FDP__CT_TM_TCP_CLOSED] = 30,
    [FDP__CT_TM_OTHER_FIRST] = 60,
    [FDP__CT_TM_OTHER_MULTIPLE] = 60,
    [FDP__CT_TM_OTHER_BIDIR] = 30,
    [FDP__CT_TM_ICMP_FIRST] = 60,
    [FDP__CT_TM_ICMP_REPLY] = 30,
};

struct ct_bucket {
    uint32_t lock;
    uint32_t overflow;          /* Entries of earlier homes stored on. */
    uint64_t slot[CT_SLOTS];
} __attribute__((aligned(64)));
static_assert(sizeof(struct ct_bucket) == 64, "a bucket is a cache line");

struct fdp__ct {
    struct fdp__ct_conn *conns;
    struct fdp__ct_conn6 *conns6;
    struct ct_bucket *buckets;  /* n_buckets + CT_MAX_PROBE - 1. */
    size_t conns_size, conns6_size, buckets_size, free_size;
    uint32_t n_buckets;
    uint32_t capacity;
    uint32_t basis;

    /* Free ids: a stack, then the never-used ids [fresh, capacity). */
    pthread_mutex_t pool_mutex;
    uint32_t *free_ids;
    uint32_t n_free;
    uint32_t fresh;             /* Atomic: sweeps read it unlocked. */

    uint32_t limbo;             /* Atomic: removed ids (id + 1) waiting
                                 * for reclamation, linked through
                                 * limbo_next. */

    uint32_t n_conns;           /* Atomic. */
    uint32_t limit;             /* Atomic. */
    uint32_t default_zone_limit;        /* Atomic. */
    uint32_t *zone_limit;       /* N_ZONES, atomic each. */
    uint32_t *zone_count;       /* N_ZONES, atomic each. */
    uint32_t timeout_ms[FDP__CT_N_TM];  /* Atomic each. */
    uint32_t (*zone_timeout_ms)[FDP__CT_N_TM];  /* Per-zone overrides
                                 * (see "Timeout policies" below): NULL
                                 * until the first is set, then N_ZONES
                                 * rows, 0 meaning "the global one";
                                 * pointer and values atomic. */

    bool tcp_seq_chk;           /* Atomic. */

    pthread_mutex_t reclaim_mutex;      /* Sweeps, flushes, populates. */
    uint32_t sweep_cursor;
    size_t populated;           /* Bytes of 'buckets' made resident. */
};

struct fdp__ct_pmd {
    struct fdp__ct *ct;
    uint64_t rng;               /* NAT's random port search restarts
                                 * (xorshift64; never zero). */
    uint32_t n_ids;
    uint32_t ids[CT_PMD_CACHE];
    struct fdp__ct_pmd_stats stats;     /* Written by the pmd only, with
                                         * relaxed atomic stores. */
};

/* A tuple as the index hashes and compares it: IPv4 in 2 words (the
 * addresses; then ports, zone, protocol, family), IPv6 in 5. */
struct ct_key {
    uint64_t w[5];
    uint32_t n_words;
    uint32_t hash;
};

/* One direction of a connection, unpacked.  For ICMP 'sport' is the echo
 * id and 'dport' the type << 8 | code of the message that direction
 * sends, so that reversing a query's tuple gives its reply's. */
struct ct_tup {
    struct fdp_value src, dst;
    uint16_t sport, dport;
    uint8_t proto;
    bool ipv6;
};

/* A packet of a batch. */
struct ct_ctx {
    bool ok;                    /* Extracted: 'tup', 'key' valid. */
    bool related;               /* An ICMP error: 'tup' is the reversed
                                 * inner tuple. */
    struct ct_tup tup;
    struct ct_key key;
    const uint8_t *l4;          /* TCP: the header and segment size. */
    size_t l4_size;
    uint8_t *nat_l3;            /* NAT rewrites: the network header ... */
    size_t nat_l4_off;          /* ... where the transport header starts
                                 * in it ... */
    size_t nat_l4_len;          /* ... and how many bytes it has, to the
                                 * end of the IP length. */
    uint8_t icmp_type;          /* ICMP queries: the packet's type. */
    uint16_t zone;
    bool has_rkey;              /* 'rkey' is the reversed tuple's key
                                 * (computed early for a likely commit). */
    struct ct_key rkey;
    bool natted;                /* Translated by a ct() of this zone
                                 * before: looked up by 'nkey', the
                                 * reversed tuple's key. */
    uint8_t prior;              /* The key's ct_state if its ct_zone is
                                 * this zone, else 0 (process_one()'s
                                 * reset on entering a new zone). */
    uint32_t cached;            /* The key's cached-connection hint
                                 * (fdp__ct_execute()). */
    struct ct_key nkey;
};

/* ---- Small helpers ---- */

#define KEY_FIELD(KEY, ID)                                              \
    (((KEY)->w[FDP__WORD_##ID] & FDP__MASK(ID)) >> FDP__SHIFT_##ID)

static_assert(FDP__WORD_CT_TP_SRC == FDP__CT_CACHE_WORD
              && FDP__WORD_CT_TP_DST == FDP__CT_CACHE_WORD
              && FDP__SHIFT_CT_TP_DST == 32,
              "the cached-connection hint has the low half of its word");

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

/* A spin-wait hint to the CPU (PAUSE on x86). */
static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void
spin_lock_u32(uint32_t *lock)
{
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
            cpu_relax();
        }
    }
}

static void
spin_unlock_u32(uint32_t *lock)
{
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

static void
conn_lock(struct fdp__ct_conn *conn)
{
    while (__atomic_exchange_n(&conn->lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&conn->lock, __ATOMIC_RELAXED)) {
            cpu_relax();
        }
    }
}

static void
conn_unlock(struct fdp__ct_conn *conn)
{
    __atomic_store_n(&conn->lock, 0, __ATOMIC_RELEASE);
}

static bool
is_icmp(const struct ct_tup *t)
{
    return t->proto == (t->ipv6 ? FDP_IPPROTO_ICMPV6 : FDP_IPPROTO_ICMP);
}

/* The type that answers ICMP query 'type' (reverse_icmp_type(),
 * reverse_icmp6_type()), or -1 if 'type' is not a query. */
static int
icmp_reverse_type(bool ipv6, uint8_t type)
{
    if (ipv6) {
        switch (type) {
        case 128: return 129;   /* Echo request, reply. */
        case 129: return 128;
        default: return -1;
        }
    }
    switch (type) {
    case 8: return 0;           /* Echo request, reply. */
    case 0: return 8;
    case 13: return 14;         /* Timestamp request, reply. */
    case 14: return 13;
    case 15: return 16;         /* Information request, reply. */
    case 16: return 15;
    default: return -1;
    }
}

static void
tup_reverse(struct ct_tup *t)
{
    struct fdp_value a = t->src;
    t->src = t->dst;
    t->dst = a;
    if (is_icmp(t)) {
        int rev = icmp_reverse_type(t->ipv6, (uint8_t) (t->dport >> 8));
        t->dport = (uint16_t) ((rev < 0 ? 0 : rev) << 8 | (t->dport & 0xff));
    } else {
        uint16_t p = t->sport;
        t->sport = t->dport;
        t->dport = p;
    }
}

static void
key_make(struct ct_key *k, const struct ct_tup *t, uint16_t zone,
         uint32_t basis)
{
    uint64_t meta = (uint64_t) t->sport << 48 | (uint64_t) t->dport << 32
                    | (uint64_t) zone << 16 | (uint64_t) t->proto << 8
                    | (t->ipv6 ? 6 : 4);
    if (t->ipv6) {
        k->w[0] = t->src.hi;
        k->w[1] = t->src.lo;
        k->w[2] = t->dst.hi;
        k->w[3] = t->dst.lo;
        k->w[4] = meta;
        k->n_words = 5;
    } else {
        k->w[0] = (t->src.lo & 0xffffffffu) << 32 | (t->dst.lo & 0xffffffffu);
        k->w[1] = meta;
        k->n_words = 2;
    }
    k->hash = fdp_hash_fast(k->w, k->n_words, basis);
}

static bool
key_equal(const struct ct_key *a, const struct ct_key *b)
{
    if (a->n_words != b->n_words || a->w[0] != b->w[0] || a->w[1] != b->w[1]) {
        return false;
    }
    return a->n_words == 2 || !memcmp(&a->w[2], &b->w[2], 3 * sizeof a->w[0]);
}

/* Direction 'dir' of record 'id'. */
static void
conn_tup(const struct fdp__ct *ct, uint32_t id, int dir, struct ct_tup *t)
{
    const struct fdp__ct_conn *c = &ct->conns[id];

    memset(t, 0, sizeof *t);
    t->proto = c->proto;
    t->ipv6 = c->ipv6;
    t->sport = c->port[dir][0];
    t->dport = c->port[dir][1];
    if (c->ipv6) {
        const struct fdp__ct_conn6 *c6 = &ct->conns6[id];
        t->src = (struct fdp_value) { c6->addr[dir][0][0], c6->addr[dir][0][1] };
        t->dst = (struct fdp_value) { c6->addr[dir][1][0], c6->addr[dir][1][1] };
    } else {
        t->src.lo = c->addr[dir][0];
        t->dst.lo = c->addr[dir][1];
    }
}

/* The index key of direction 'dir' of record 'id', without its hash
 * (for comparisons). */
static void
conn_key_nohash(const struct fdp__ct *ct, uint32_t id, int dir,
                struct ct_key *k)
{
    const struct fdp__ct_conn *c = &ct->conns[id];
    uint64_t meta = (uint64_t) c->port[dir][0] << 48
                    | (uint64_t) c->port[dir][1] << 32
                    | (uint64_t) c->zone << 16 | (uint64_t) c->proto << 8
                    | (c->ipv6 ? 6 : 4);
    if (c->ipv6) {
        const struct fdp__ct_conn6 *c6 = &ct->conns6[id];
        k->w[0] = c6->addr[dir][0][0];
        k->w[1] = c6->addr[dir][0][1];
        k->w[2] = c6->addr[dir][1][0];
        k->w[3] = c6->addr[dir][1][1];
        k->w[4] = meta;
        k->n_words = 5;
    } else {
        k->w[0] = (uint64_t) c->addr[dir][0] << 32 | c->addr[dir][1];
        k->w[1] = meta;
        k->n_words = 2;
    }
}

static void
conn_key(const struct fdp__ct *ct, uint32_t id, int dir, struct ct_key *k)
{
    conn_key_nohash(ct, id, dir, k);
    k->hash = fdp_hash_fast(k->w, k->n_words, ct->basis);
}

static void
tuple_out(const struct ct_tup *t, struct fdp__ct_tuple *out)
{
    out->src = t->src;
    out->dst = t->dst;
    out->proto = t->proto;
    out->ipv6 = t->ipv6;
    if (is_icmp(t)) {
        out->src_port = t->dport >> 8;
        out->dst_port = t->dport & 0xff;
        out->icmp_id = t->sport;
    } else {
        out->src_port = t->sport;
        out->dst_port = t->dport;
        out->icmp_id = 0;
    }
}

static uint32_t
home_of(const struct fdp__ct *ct, uint32_t hash)
{
    return (uint32_t) (((uint64_t) hash * ct->n_buckets) >> 32);
}

static inline uint64_t
slot_value(uint32_t hash, uint32_t id, int dir)
{
    return (uint64_t) hash << 32 | ((id << 1 | (uint32_t) dir) + 1);
}

/* ---- Index ---- */

/* The slots of 'b' whose signature is 'hash', as bit s for slot s: a
 * filter, after which the caller loads each such slot again with an
 * acquire load (which orders its reads of the record after the release
 * that published it) and checks it.  With SSE2 one compare covers four
 * 32-bit halves, a fourth of the instructions of the scalar loop; those
 * plain loads may race with a concurrent insert into another home's
 * entry of the same bucket (harmless: a lookup racing an insert may miss
 * it either way), so ThreadSanitizer builds take the scalar loop of
 * atomic loads. */
static inline unsigned int
bucket_matches(const struct ct_bucket *b, uint32_t hash)
{
#ifdef CT_SIMD_SCAN
    const __m128 *p = (const __m128 *) (const void *) b;
    __m128i h = _mm_set1_epi32((int) hash);
    /* The high halves of the eight 64-bit words (lanes 1 and 3 of each
     * 16 bytes), four to a vector: the signatures, after word 0's
     * overflow count. */
    __m128i lo = _mm_castps_si128(_mm_shuffle_ps(p[0], p[1],
                                                 _MM_SHUFFLE(3, 1, 3, 1)));
    __m128i hi = _mm_castps_si128(_mm_shuffle_ps(p[2], p[3],
                                                 _MM_SHUFFLE(3, 1, 3, 1)));
    unsigned int m
        = (unsigned int) _mm_movemask_ps(_mm_castsi128_ps(
              _mm_cmpeq_epi32(lo, h)))
          | (unsigned int) _mm_movemask_ps(_mm_castsi128_ps(
                _mm_cmpeq_epi32(hi, h))) << 4;
    return m >> 1;
#else
    unsigned int m = 0;
    for (int s = 0; s < CT_SLOTS; s++) {
        uint64_t v = __atomic_load_n(&b->slot[s], __ATOMIC_RELAXED);
        m |= (unsigned int) ((uint32_t) (v >> 32) == hash) << s;
    }
    return m;
#endif
}

/* Finds the unexpired, live connection one of whose directions is 'k' at
 * 'now'.  Lock-free: the caller is in an RCU read-side section or holds
 * the home bucket's lock. */
static bool
ct_find(const struct fdp__ct *ct, const struct ct_key *k, uint64_t now,
        uint32_t *idp, bool *reply)
{
    const struct ct_bucket *b = &ct->buckets[home_of(ct, k->hash)];

    for (int i = 0; i < CT_MAX_PROBE; i++, b++) {
        for (unsigned int m = bucket_matches(b, k->hash); m; m &= m - 1) {
            int s = __builtin_ctz(m);
            uint64_t v = __atomic_load_n(&b->slot[s], __ATOMIC_ACQUIRE);
            if ((uint32_t) (v >> 32) != k->hash || !(uint32_t) v) {
                continue;
            }
            uint32_t e = (uint32_t) v - 1;
            uint32_t id = e >> 1;
            const struct fdp__ct_conn *c = &ct->conns[id];
            if (__atomic_load_n(&c->dead, __ATOMIC_RELAXED)
                || now >= __atomic_load_n(&c->expiry, __ATOMIC_RELAXED)) {
                continue;
            }
            struct ct_key ck;
            conn_key_nohash(ct, id, e & 1, &ck);
            if (key_equal(&ck, k)) {
                *idp = id;
                *reply = e & 1;
                return true;
            }
        }
        if (!__atomic_load_n(&b->overflow, __ATOMIC_RELAXED)) {
            break;
        }
    }
    return false;
}

/* Enters 'value' for key 'k'.  The caller holds the home bucket's lock. */
static bool
ct_slot_insert(struct fdp__ct *ct, const struct ct_key *k, uint64_t value)
{
    uint32_t home = home_of(ct, k->hash);

    for (int i = 0; i < CT_MAX_PROBE; i++) {
        struct ct_bucket *b = &ct->buckets[home + i];
        for (int s = 0; s < CT_SLOTS; s++) {
            uint64_t expected = 0;
            if (!__atomic_load_n(&b->slot[s], __ATOMIC_RELAXED)
                && __atomic_compare_exchange_n(&b->slot[s], &expected, value,
                                               false, __ATOMIC_RELEASE,
                                               __ATOMIC_RELAXED)) {
                for (int j = 0; j < i; j++) {
                    __atomic_fetch_add(&ct->buckets[home + j].overflow, 1,
                                       __ATOMIC_RELAXED);
                }
                return true;
            }
        }
    }
    return false;
}

/* Clears the slot holding 'value' for key 'k'.  The caller holds the home
 * bucket's lock. */
static void
ct_slot_remove(struct fdp__ct *ct, const struct ct_key *k, uint64_t value)
{
    uint32_t home = home_of(ct, k->hash);

    for (int i = 0; i < CT_MAX_PROBE; i++) {
        struct ct_bucket *b = &ct->buckets[home + i];
        for (int s = 0; s < CT_SLOTS; s++) {
            if (__atomic_load_n(&b->slot[s], __ATOMIC_RELAXED) == value) {
                __atomic_store_n(&b->slot[s], 0, __ATOMIC_RELAXED);
                for (int j = 0; j < i; j++) {
                    __atomic_fetch_sub(&ct->buckets[home + j].overflow, 1,
                                       __ATOMIC_RELAXED);
                }
                return;
            }
        }
    }
}

/* Locks the home buckets of 'k0' and 'k1' (in order; once if the same). */
static void
homes_lock(struct fdp__ct *ct, const struct ct_key *k0,
           const struct ct_key *k1, uint32_t *a, uint32_t *b)
{
    *a = home_of(ct, k0->hash);
    *b = home_of(ct, k1->hash);
    if (*a > *b) {
        uint32_t t = *a;
        *a = *b;
        *b = t;
    }
    spin_lock_u32(&ct->buckets[*a].lock);
    if (*b != *a) {
        spin_lock_u32(&ct->buckets[*b].lock);
    }
}

static void
homes_unlock(struct fdp__ct *ct, uint32_t a, uint32_t b)
{
    if (b != a) {
        spin_unlock_u32(&ct->buckets[b].lock);
    }
    spin_unlock_u32(&ct->buckets[a].lock);
}

/* ---- Ids ---- */

static bool
id_alloc(struct fdp__ct_pmd *pmd, uint32_t *id)
{
    if (!pmd->n_ids) {
        struct fdp__ct *ct = pmd->ct;
        pthread_mutex_lock(&ct->pool_mutex);
        while (pmd->n_ids < CT_PMD_REFILL && ct->n_free) {
            pmd->ids[pmd->n_ids++] = ct->free_ids[--ct->n_free];
        }
        uint32_t fresh = ct->fresh;
        while (pmd->n_ids < CT_PMD_REFILL && fresh < ct->capacity) {
            pmd->ids[pmd->n_ids++] = fresh++;
        }
        __atomic_store_n(&ct->fresh, fresh, __ATOMIC_RELEASE);
        /* Lowest ids first, so that memory is touched in order. */
        for (uint32_t i = 0; i < pmd->n_ids / 2; i++) {
            uint32_t t = pmd->ids[i];
            pmd->ids[i] = pmd->ids[pmd->n_ids - 1 - i];
            pmd->ids[pmd->n_ids - 1 - i] = t;
        }
        pthread_mutex_unlock(&ct->pool_mutex);
        if (!pmd->n_ids) {
            return false;
        }
    }
    *id = pmd->ids[--pmd->n_ids];
    return true;
}

static void
id_unalloc(struct fdp__ct_pmd *pmd, uint32_t id)
{
    /* The id just came from the cache, so there is room. */
    pmd->ids[pmd->n_ids++] = id;
}

/* Removes record 'id' from the index and queues it for reclamation, unless
 * another thread got there first.  Returns true if this call removed it.
 * The caller holds no bucket lock. */
static bool
conn_kill(struct fdp__ct *ct, uint32_t id)
{
    struct fdp__ct_conn *c = &ct->conns[id];
    uint8_t zero = 0;

    if (!__atomic_compare_exchange_n(&c->dead, &zero, 1, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        return false;
    }

    struct ct_key k0, k1;
    uint32_t a, b;
    conn_key(ct, id, 0, &k0);
    conn_key(ct, id, 1, &k1);
    homes_lock(ct, &k0, &k1, &a, &b);
    ct_slot_remove(ct, &k0, slot_value(k0.hash, id, 0));
    if (!key_equal(&k0, &k1)) {
        ct_slot_remove(ct, &k1, slot_value(k1.hash, id, 1));
    }
    homes_unlock(ct, a, b);

    __atomic_fetch_sub(&ct->n_conns, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&ct->zone_count[c->zone], 1, __ATOMIC_RELAXED);

    uint32_t head = __atomic_load_n(&ct->limbo, __ATOMIC_RELAXED);
    do {
        __atomic_store_n(&c->limbo_next, head, __ATOMIC_RELAXED);
    } while (!__atomic_compare_exchange_n(&ct->limbo, &head, id + 1, true,
                                          __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    return true;
}

/* Returns the removed records to the free pool, after a grace period.
 * The caller holds 'reclaim_mutex' and is outside any read section. */
static void
ct_reclaim(struct fdp__ct *ct)
{
    uint32_t head = __atomic_exchange_n(&ct->limbo, 0, __ATOMIC_ACQUIRE);
    if (!head) {
        return;
    }
    fdp__rcu_synchronize();
    FDP_RCU_TSAN_ACQUIRE();

    pthread_mutex_lock(&ct->pool_mutex);
    while (head) {
        uint32_t id = head - 1;
        struct fdp__ct_conn *c = &ct->conns[id];
        head = __atomic_load_n(&c->limbo_next, __ATOMIC_RELAXED);
        __atomic_store_n(&c->live, 0, __ATOMIC_RELAXED);
        ct->free_ids[ct->n_free++] = id;
    }
    pthread_mutex_unlock(&ct->pool_mutex);
}

/* ---- Packet parsing (conn_key_extract()) ---- */

/* One's-complement sums (RFC 1071), 32-bit big-endian words into a 64-bit
 * accumulator: the sum is the same in any word size once folded, and a
 * fourth of the additions of 16-bit ones (every TCP, UDP and ICMP packet
 * is verified).  An odd tail is padded with zeros on the right, as the
 * RFC pads the last byte. */
static inline uint64_t
csum_words(uint64_t sum, const uint8_t *p, size_t n)
{
    for (; n >= 16; p += 16, n -= 16) {
        sum += (uint64_t) fdp__get32(p) + fdp__get32(p + 4)
               + fdp__get32(p + 8) + fdp__get32(p + 12);
    }
    for (; n >= 4; p += 4, n -= 4) {
        sum += fdp__get32(p);
    }
    if (n) {
        uint8_t tail[4] = { 0, 0, 0, 0 };
        memcpy(tail, p, n);
        sum += fdp__get32(tail);
    }
    return sum;
}

/* 'sum' folded to 16 bits (0xffff for data that verifies). */
static inline uint16_t
csum_fold(uint64_t sum)
{
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t) sum;
}

/* The pseudo-header's sum for 'l4_size' bytes of 'proto' under the IP
 * header at 'l3'. */
static uint64_t
csum_pseudo(const struct ct_tup *t, const uint8_t *l3, uint8_t proto,
            size_t l4_size)
{
    uint64_t sum = (uint64_t) proto + l4_size;
    return csum_words(sum, l3 + (t->ipv6 ? 8 : 12), t->ipv6 ? 32 : 8);
}

/* The inner header of an ICMP error at 'in' ('size' bytes): fills 't' with
 * the inner packet's tuple, unreversed.  'outer_dst' must be the inner
 * source.  Open vSwitch's extract_l4_icmp(), extract_l4_icmp6() error
 * cases, with related = NULL for the inner transport header: no checksum
 * checks, 8 bytes of transport header required, no nested errors. */
static bool
extract_inner(const uint8_t *in, size_t size, bool ipv6,
              const struct fdp_value *outer_dst, struct ct_tup *t)
{
    const uint8_t *l4;
    size_t l4_size;

    memset(t, 0, sizeof *t);
    t->ipv6 = ipv6;
    if (!ipv6) {
        if (size < 20) {
            return false;
        }
        size_t ihl = (size_t) (in[0] & 0xf) * 4;
        uint16_t frag = fdp__get16(in + 6);
        if (ihl < 20 || ihl > size || (frag & 0x3fff)) {
            return false;       /* Short, or a fragment (MF or offset). */
        }
        t->src.lo = fdp__get32(in + 12);
        t->dst.lo = fdp__get32(in + 16);
        t->proto = in[9];
        l4 = in + ihl;
        l4_size = size - ihl;
    } else {
        /* Extension headers in the inner packet are not parsed: an error
         * quoting one is not matched (Open vSwitch walks them). */
        if (size < 40) {
            return false;
        }
        t->src.hi = (uint64_t) fdp__get32(in + 8) << 32 | fdp__get32(in + 12);
        t->src.lo = (uint64_t) fdp__get32(in + 16) << 32 | fdp__get32(in + 20);
        t->dst.hi = (uint64_t) fdp__get32(in + 24) << 32 | fdp__get32(in + 28);
        t->dst.lo = (uint64_t) fdp__get32(in + 32) << 32 | fdp__get32(in + 36);
        t->proto = in[6];
        l4 = in + 40;
        l4_size = size - 40;
    }
    if (t->src.hi != outer_dst->hi || t->src.lo != outer_dst->lo) {
        return false;
    }

    switch (t->proto) {
    case FDP_IPPROTO_TCP:
    case FDP_IPPROTO_UDP:
        if (l4_size < 8) {
            return false;
        }
        t->sport = fdp__get16(l4);
        t->dport = fdp__get16(l4 + 2);
        return t->sport && t->dport;
    case FDP_IPPROTO_ICMP:
    case FDP_IPPROTO_ICMPV6:
        if (t->proto != (ipv6 ? FDP_IPPROTO_ICMPV6 : FDP_IPPROTO_ICMP)) {
            return true;        /* An "other" protocol for this family. */
        }
        if (l4_size < 8 || l4[1] != 0
            || icmp_reverse_type(ipv6, l4[0]) < 0) {
            return false;
        }
        t->sport = fdp__get16(l4 + 4);
        t->dport = (uint16_t) (l4[0] << 8);
        return true;
    default:
        return true;
    }
}

/* Whether the IPv4 header checksum over 'ihl' bytes at 'h' verifies: the
 * one's-complement sum of its 16-bit words is 0xffff. */
static inline bool
ipv4_header_ok(const uint8_t *h, size_t ihl)
{
    /* 32 bits at a time into 64 (ihl is a multiple of 4, at most 60,
     * so nothing overflows), then folded: RFC 1071's sum is the same in
     * any word size. */
    uint64_t sum = 0;
    for (size_t i = 0; i < ihl; i += 4) {
        sum += fdp__get32(h + i);
    }
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

/* Parses 'pkt' into 'c' for zone 'zone'; false makes it +inv. */
static bool
ct_extract(const struct fdp__pkt *pkt, uint16_t zone, uint32_t basis,
           struct ct_ctx *c)
{
    const struct fdp_key *key = &pkt->key;
    uint16_t dl_type = (uint16_t) KEY_FIELD(key, DL_TYPE);
    struct ct_tup *t = &c->tup;

    /* Only what every path reads is cleared (a memset of the whole
     * context costs more than the rest of the parse). */
    c->ok = false;
    c->related = false;
    c->natted = false;
    c->prior = KEY_FIELD(key, CT_ZONE) == zone
               ? (uint8_t) KEY_FIELD(key, CT_STATE) : 0;
    c->cached = (uint32_t) key->w[FDP__CT_CACHE_WORD];
    c->l4 = NULL;
    c->l4_size = 0;
    c->icmp_type = 0;
    c->zone = zone;
    t->src.hi = t->dst.hi = 0;
    t->sport = t->dport = 0;
    t->ipv6 = false;
    if ((dl_type != FDP_ETH_TYPE_IP && dl_type != FDP_ETH_TYPE_IPV6)
        || pkt->layout.l3 < 0
        || (KEY_FIELD(key, IP_FRAG) & FDP_FRAG_ANY)) {
        return false;
    }

    /* The network header: addresses from the key, lengths from bytes. */
    const uint8_t *l3 = pkt->data + pkt->layout.l3;
    size_t l3_size = pkt->size - (size_t) pkt->layout.l3;
    size_t l3_len;
    t->proto = (uint8_t) KEY_FIELD(key, NW_PROTO);
    if (dl_type == FDP_ETH_TYPE_IP) {
        if (l3_size < 20) {
            return false;
        }
        size_t ihl = (size_t) (l3[0] & 0xf) * 4;
        l3_len = fdp__get16(l3 + 2);
        if (ihl < 20 || l3_len < ihl || l3_len > l3_size
            || !ipv4_header_ok(l3, ihl)) {
            return false;
        }
        t->src.lo = KEY_FIELD(key, NW_SRC);
        t->dst.lo = KEY_FIELD(key, NW_DST);
    } else {
        if (l3_size < 40) {
            return false;
        }
        l3_len = 40 + (size_t) fdp__get16(l3 + 4);
        if (l3_len > l3_size) {
            return false;
        }
        t->ipv6 = true;
        t->src = (struct fdp_value) { key->w[FDP__WORD_IPV6_SRC],
                                      key->w[FDP__WORD_IPV6_SRC + 1] };
        t->dst = (struct fdp_value) { key->w[FDP__WORD_IPV6_DST],
                                      key->w[FDP__WORD_IPV6_DST + 1] };
    }
    /* The parser leaves l4 unset when the transport header is too short
     * for it (an SCTP header under 12 bytes); Open vSwitch's l4 offset is
     * where the network header ends all the same. */
    size_t l4_off;
    if (pkt->layout.l4 >= pkt->layout.l3) {
        l4_off = (size_t) (pkt->layout.l4 - pkt->layout.l3);
    } else if (!t->ipv6) {
        l4_off = (size_t) (l3[0] & 0xf) * 4;
    } else if (l3[6] == t->proto) {
        l4_off = 40;            /* No extension headers. */
    } else {
        return false;
    }
    if (l4_off > l3_len) {
        return false;
    }
    const uint8_t *l4 = l3 + l4_off;
    size_t l4_size = l3_len - l4_off;
    c->nat_l3 = pkt->data + pkt->layout.l3;
    c->nat_l4_off = l4_off;
    c->nat_l4_len = l4_size;

    /* The transport header (extract_l4() with checksums). */
    switch (t->proto) {
    case FDP_IPPROTO_TCP: {
        if (l4_size < 20) {
            return false;
        }
        size_t hdr = (size_t) (l4[12] >> 4) * 4;
        if (hdr < 20 || hdr > l4_size
            || csum_fold(csum_words(csum_pseudo(t, l3, t->proto, l4_size),
                                    l4, l4_size)) != 0xffff) {
            return false;
        }
        t->sport = fdp__get16(l4);
        t->dport = fdp__get16(l4 + 2);
        c->l4 = l4;
        c->l4_size = l4_size;
        if (!t->sport || !t->dport) {
            return false;
        }
        break;
    }
    case FDP_IPPROTO_UDP: {
        if (l4_size < 8) {
            return false;
        }
        size_t udp_len = fdp__get16(l4 + 4);
        if (udp_len < 8 || udp_len > l4_size) {
            return false;
        }
        if (!(fdp__get16(l4 + 6) == 0 && !t->ipv6)
            && csum_fold(csum_words(csum_pseudo(t, l3, t->proto, l4_size),
                                    l4, l4_size)) != 0xffff) {
            return false;
        }
        t->sport = fdp__get16(l4);
        t->dport = fdp__get16(l4 + 2);
        if (!t->sport || !t->dport) {
            return false;
        }
        break;
    }
    case FDP_IPPROTO_ICMP:
    case FDP_IPPROTO_ICMPV6: {
        if (t->proto != (t->ipv6 ? FDP_IPPROTO_ICMPV6 : FDP_IPPROTO_ICMP)) {
            break;              /* "Other" for this family. */
        }
        if (l4_size < 8) {
            return false;
        }
        uint64_t sum = t->ipv6 ? csum_pseudo(t, l3, t->proto, l4_size) : 0;
        if (csum_fold(csum_words(sum, l4, l4_size)) != 0xffff) {
            return false;
        }
        uint8_t type = l4[0], code = l4[1];
        if (icmp_reverse_type(t->ipv6, type) >= 0) {
            if (code) {
                return false;
            }
            t->sport = fdp__get16(l4 + 4);
            t->dport = (uint16_t) (type << 8);
            c->icmp_type = type;
            break;
        }
        bool error = t->ipv6 ? (type >= 1 && type <= 4)
                     : (type == 3 || type == 4 || type == 5 || type == 11
                        || type == 12);
        struct ct_tup inner;
        if (!error || !extract_inner(l4 + 8, l4_size - 8, t->ipv6, &t->dst,
                                     &inner)) {
            return false;
        }
        *t = inner;
        tup_reverse(t);
        c->related = true;
        break;
    }
    default:
        break;
    }

    c->ok = true;
    key_make(&c->key, t, zone, basis);

    /* A packet a ct() of this zone already translated (its key's ct
     * fields say so) is looked up by its reverse, which is the other
     * direction's stored tuple (initial_conn_lookup() with 'natted'). */
    c->natted = (c->prior & (FDP_CT_SNAT | FDP_CT_DNAT)) != 0;
    if (c->natted) {
        struct ct_tup rev = *t;
        tup_reverse(&rev);
        key_make(&c->nkey, &rev, zone, basis);
    }
    return true;
}

/* The key a packet is looked up by. */
static inline const struct ct_key *
lookup_key(const struct ct_ctx *c)
{
    return c->natted ? &c->nkey : &c->key;
}

/* ---- Protocol state (conn_update(), valid_new(), new_conn()) ---- */

static uint64_t
ct_expiry(const struct fdp__ct *ct, uint16_t zone, enum fdp__ct_tm tm,
          uint64_t now)
{
    uint32_t (*zt)[FDP__CT_N_TM] = __atomic_load_n(&ct->zone_timeout_ms,
                                                   __ATOMIC_ACQUIRE);
    uint32_t ms = zt ? ld32(&zt[zone][tm]) : 0;
    return now + (ms ? ms : ld32(&ct->timeout_ms[tm]));
}

static void
conn_refresh(struct fdp__ct *ct, struct fdp__ct_conn *c, enum fdp__ct_tm tm,
             uint64_t now)
{
    __atomic_store_n(&c->tm, (uint8_t) tm, __ATOMIC_RELAXED);
    __atomic_store_n(&c->expiry, ct_expiry(ct, c->zone, tm, now),
                     __ATOMIC_RELAXED);
}

static bool
valid_new(const struct ct_ctx *c)
{
    if (c->tup.proto == FDP_IPPROTO_TCP) {
        return fdp__ct_tcp_valid_new(c->l4, c->l4_size);
    }
    if (is_icmp(&c->tup)) {
        /* Requests only: echo (and for IPv4 timestamp, information). */
        return c->tup.ipv6 ? c->icmp_type == 128
               : (c->icmp_type == 8 || c->icmp_type == 13
                  || c->icmp_type == 15);
    }
    return true;
}

static enum fdp__ct_update
conn_update(struct fdp__ct *ct, struct fdp__ct_conn *conn,
            const struct ct_ctx *c, bool reply, uint64_t now)
{
    enum fdp__ct_update res;

    if (c->tup.proto == FDP_IPPROTO_TCP) {
        enum fdp__ct_tm tm;
        conn_lock(conn);
        res = fdp__ct_tcp_update(conn, c->l4, c->l4_size, reply,
                                 __atomic_load_n(&ct->tcp_seq_chk,
                                                 __ATOMIC_RELAXED), &tm);
        if (tm != FDP__CT_N_TM) {
            conn_refresh(ct, conn, tm, now);
        }
        conn_unlock(conn);
        return res;
    }

    bool icmp = is_icmp(&c->tup);
    uint8_t done = icmp ? CT_ICMP_REPLY : CT_OTHER_BIDIR;
    enum fdp__ct_tm done_tm = icmp ? FDP__CT_TM_ICMP_REPLY
                              : FDP__CT_TM_OTHER_BIDIR;
    if (__atomic_load_n(&conn->l4_state, __ATOMIC_RELAXED) == done) {
        /* The lock-free path: both directions seen, only the expiry
         * moves. */
        __atomic_store_n(&conn->expiry,
                         ct_expiry(ct, conn->zone, done_tm, now),
                         __ATOMIC_RELAXED);
        return FDP__CT_UPDATE_VALID;
    }

    conn_lock(conn);
    uint8_t state = conn->l4_state;
    enum fdp__ct_tm tm;
    if (icmp) {
        /* icmp_conn_update(). */
        res = FDP__CT_UPDATE_VALID;
        if (reply && state == CT_ICMP_FIRST) {
            state = CT_ICMP_REPLY;
        } else if (state == CT_ICMP_FIRST) {
            res = FDP__CT_UPDATE_VALID_NEW;
        }
        tm = state == CT_ICMP_REPLY ? FDP__CT_TM_ICMP_REPLY
             : FDP__CT_TM_ICMP_FIRST;
    } else {
        /* other_conn_update(). */
        if (reply && state != CT_OTHER_BIDIR) {
            state = CT_OTHER_BIDIR;
        } else if (state == CT_OTHER_FIRST) {
            state = CT_OTHER_MULTIPLE;
        }
        res = state == CT_OTHER_BIDIR ? FDP__CT_UPDATE_VALID
              : FDP__CT_UPDATE_VALID_NEW;
        tm = state == CT_OTHER_BIDIR ? FDP__CT_TM_OTHER_BIDIR
             : state == CT_OTHER_MULTIPLE ? FDP__CT_TM_OTHER_MULTIPLE
             : FDP__CT_TM_OTHER_FIRST;
    }
    __atomic_store_n(&conn->l4_state, state, __ATOMIC_RELAXED);
    conn_refresh(ct, conn, tm, now);
    conn_unlock(conn);
    return res;
}

/* ---- NAT: rewriting packets (nat_packet(), nat_inner_packet()) ---- */

/* RFC 1624 equation 3: the checksum stored at 'csum' after 'n' bytes
 * (an even number, at an even offset of the covered data) change from
 * 'old' to 'new'. */
static void
csum_replace(uint8_t *csum, const uint8_t *old, const uint8_t *new, size_t n)
{
    uint64_t sum = (uint16_t) ~fdp__get16(csum);
    for (size_t i = 0; i < n; i += 2) {
        sum += (uint16_t) ~fdp__get16(old + i);
        sum += fdp__get16(new + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    fdp__put16(csum, (uint16_t) ~sum);
}

/* A network header to rewrite and its transport header: the outer one of
 * a packet, or the one an ICMP error quotes ('l4_len' is then what the
 * error holds of it, possibly less than a whole header). */
struct nat_hdr {
    uint8_t *l3;
    bool ipv6;
    uint8_t proto;
    uint8_t *l4;
    size_t l4_len;
};

/* Where the transport checksum that covers the addresses is, if there is
 * one to keep up to date: TCP's and UDP's (pseudo-header), ICMPv6's
 * (pseudo-header); not ICMPv4's, which covers no address.  A UDP
 * checksum of zero means none and stays zero (IPv4; for IPv6 Open
 * vSwitch leaves it too). */
static uint8_t *
nat_l4_csum(const struct nat_hdr *h)
{
    switch (h->proto) {
    case FDP_IPPROTO_TCP:
        return h->l4_len >= 20 ? h->l4 + 16 : NULL;
    case FDP_IPPROTO_UDP:
        return h->l4_len >= 8 && fdp__get16(h->l4 + 6) ? h->l4 + 6 : NULL;
    case FDP_IPPROTO_ICMPV6:
        return h->ipv6 && h->l4_len >= 4 ? h->l4 + 2 : NULL;
    default:
        return NULL;
    }
}

/* Writes 'n' bytes 'new' at 'field' of 'h', keeping the IPv4 header
 * checksum (if 'ip_csum') and the transport checksum (if 'l4_csum')
 * right. */
static void
nat_write(const struct nat_hdr *h, uint8_t *field, const uint8_t *new,
          size_t n, bool ip_csum, bool l4_csum)
{
    uint8_t old[16];
    memcpy(old, field, n);
    memcpy(field, new, n);
    if (ip_csum && !h->ipv6) {
        csum_replace(h->l3 + 10, old, new, n);
    }
    uint8_t *c = l4_csum ? nat_l4_csum(h) : NULL;
    if (c) {
        csum_replace(c, old, new, n);
        if (h->proto == FDP_IPPROTO_UDP && !fdp__get16(c)) {
            fdp__put16(c, 0xffff);      /* Zero would mean "none". */
        }
    }
}

/* Sets the source (or destination) address of 'h' to 'a'. */
static void
nat_set_addr(const struct nat_hdr *h, bool src, const struct fdp_value *a)
{
    uint8_t new[16];
    if (h->ipv6) {
        fdp__put32(new, (uint32_t) (a->hi >> 32));
        fdp__put32(new + 4, (uint32_t) a->hi);
        fdp__put32(new + 8, (uint32_t) (a->lo >> 32));
        fdp__put32(new + 12, (uint32_t) a->lo);
        nat_write(h, h->l3 + (src ? 8 : 24), new, 16, false, true);
    } else {
        fdp__put32(new, (uint32_t) a->lo);
        nat_write(h, h->l3 + (src ? 12 : 16), new, 4, true, true);
    }
}

/* Sets the TCP or UDP ports of 'h' (Open vSwitch's pat_packet()); other
 * protocols keep theirs. */
static void
nat_set_ports(const struct nat_hdr *h, uint16_t sport, uint16_t dport)
{
    if ((h->proto != FDP_IPPROTO_TCP && h->proto != FDP_IPPROTO_UDP)
        || h->l4_len < 4) {
        return;
    }
    uint8_t new[4];
    fdp__put16(new, sport);
    fdp__put16(new + 2, dport);
    nat_write(h, h->l4, new, 4, false, true);
}

/* Rewrites the packet of 'c', of connection 'id' in direction 'reply',
 * with the connection's translation: the original direction gets the
 * reply tuple's view of the translated side, the reply direction the
 * original tuple's (Open vSwitch's nat_packet(), reverse_nat_packet():
 * the address the translation names, and for TCP and UDP both ports).
 * An ICMP error's quoted packet goes the other way, so its addresses and
 * ports get the reverse (nat_inner_packet()) and the ICMP checksum is
 * recomputed over the rewritten message.  Returns the ct_state bit the
 * packet gets: +snat when its source was the translated side, +dnat
 * when its destination was (so a reply to a SNAT connection is +dnat, as
 * in Open vSwitch). */
static uint8_t
nat_packet(const struct fdp__ct *ct, uint32_t id, const struct ct_ctx *c,
           bool reply)
{
    const struct fdp__ct_conn *conn = &ct->conns[id];
    bool src = (conn->nat == FDP__CT_NAT_SRC) != reply;
    struct ct_tup k;
    conn_tup(ct, id, !reply, &k);

    struct nat_hdr h = {
        .l3 = c->nat_l3, .ipv6 = c->tup.ipv6, .proto = c->tup.proto,
        .l4 = c->nat_l3 + c->nat_l4_off, .l4_len = c->nat_l4_len,
    };
    if (!c->related) {
        nat_set_addr(&h, src, src ? &k.dst : &k.src);
        nat_set_ports(&h, k.dport, k.sport);
        return src ? FDP_CT_SNAT : FDP_CT_DNAT;
    }

    /* An ICMP error: the outer header as above, without the transport
     * checksum (recomputed below), then the quoted packet, whose header
     * ct_extract() checked is whole. */
    uint8_t *icmp = h.l4;
    size_t icmp_len = h.l4_len;
    h.proto = 0;
    nat_set_addr(&h, src, src ? &k.dst : &k.src);

    struct nat_hdr in = { .l3 = icmp + 8, .ipv6 = h.ipv6 };
    size_t ihl = in.ipv6 ? 40 : (size_t) (in.l3[0] & 0xf) * 4;
    in.proto = in.l3[in.ipv6 ? 6 : 9];
    in.l4 = in.l3 + ihl;
    in.l4_len = icmp_len - 8 - ihl;
    if (src) {
        nat_set_addr(&in, false, &k.dst);
    } else {
        nat_set_addr(&in, true, &k.src);
    }
    nat_set_ports(&in, k.sport, k.dport);

    fdp__put16(icmp + 2, 0);
    uint64_t sum = h.ipv6 ? csum_pseudo(&c->tup, h.l3, FDP_IPPROTO_ICMPV6,
                                        icmp_len) : 0;
    fdp__put16(icmp + 2, (uint16_t) ~csum_fold(csum_words(sum, icmp,
                                                          icmp_len)));
    return src ? FDP_CT_SNAT : FDP_CT_DNAT;
}

/* ---- Commit (conn_not_found()) ---- */

enum ct_commit {
    CT_COMMITTED,
    CT_FULL,                    /* A limit, or no id or slot left. */
    CT_RACED,                   /* Another pmd entered the connection. */
    CT_TAKEN,                   /* The reply tuple is another's. */
    CT_EXHAUSTED,               /* NAT: every candidate was taken. */
};

/* Enters record 'id' (written, not published) under 'k0' (its original
 * tuple) and 'k1' (its reply tuple): under the two home buckets' locks,
 * neither may be there already.  This check-and-insert is what makes a
 * NAT reply tuple unique: two pmds trying the same candidate serialise
 * on its home bucket, and the loser tries the next one. */
static enum ct_commit
conn_publish(struct fdp__ct *ct, uint32_t id, const struct ct_key *k0,
             const struct ct_key *k1, uint64_t now)
{
    uint32_t a, b, other;
    bool dummy;

    homes_lock(ct, k0, k1, &a, &b);
    if (ct_find(ct, k0, now, &other, &dummy)) {
        homes_unlock(ct, a, b);
        return CT_RACED;
    }
    if (ct_find(ct, k1, now, &other, &dummy)) {
        homes_unlock(ct, a, b);
        return CT_TAKEN;
    }
    bool same = key_equal(k0, k1);
    if (!ct_slot_insert(ct, k0, slot_value(k0->hash, id, 0))) {
        homes_unlock(ct, a, b);
        return CT_FULL;
    }
    if (!same && !ct_slot_insert(ct, k1, slot_value(k1->hash, id, 1))) {
        ct_slot_remove(ct, k0, slot_value(k0->hash, id, 0));
        homes_unlock(ct, a, b);
        return CT_FULL;
    }
    __atomic_store_n(&ct->conns[id].live, 1, __ATOMIC_RELEASE);
    homes_unlock(ct, a, b);
    return CT_COMMITTED;
}

/* Tries the reply tuple record 'id' holds now: a lock-free look first
 * (most taken candidates are seen there, without a lock), then the
 * locked check-and-insert. */
static enum ct_commit
nat_try(struct fdp__ct *ct, uint32_t id, const struct ct_ctx *c,
        uint64_t now)
{
    struct ct_key rk;
    uint32_t other;
    bool dummy;

    conn_key(ct, id, 1, &rk);
    if (ct_find(ct, &rk, now, &other, &dummy)) {
        return CT_TAKEN;
    }
    return conn_publish(ct, id, &c->key, &rk, now);
}

static uint64_t
pmd_random(struct fdp__ct_pmd *pmd)
{
    uint64_t x = pmd->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    pmd->rng = x;
    return x;
}

/* Searches port 'which' (0: source, 1: destination) of record 'id''s
 * reply tuple from 'curr' over [min, max] as Open vSwitch's
 * nat_get_unique_l4() does: at most 128 candidates in order from 'curr'
 * (which may lie outside the range: it is tried first), then rounds of
 * half as many from a random point while a round has at least 16, so at
 * most 248 candidates in all.  The random points come from the pmd's own
 * generator, so that pmds searching one range at once start apart.  On
 * failure the port is 'curr' again. */
static enum ct_commit
nat_search_port(struct fdp__ct_pmd *pmd, uint32_t id, const struct ct_ctx *c,
                int which, uint16_t curr, uint16_t min, uint16_t max,
                uint64_t now)
{
    struct fdp__ct *ct = pmd->ct;
    uint16_t *port = &ct->conns[id].port[1][which];
    uint32_t range = (uint32_t) max - min + 1;
    uint32_t attempts = range < 128 ? range : 128;
    uint16_t first = curr;

    for (;;) {
        bool in = curr >= min && curr <= max;
        uint32_t n = in ? range : range + 1;
        for (uint32_t i = 0; i < n && i < attempts; i++) {
            *port = curr;
            enum ct_commit r = nat_try(ct, id, c, now);
            if (r != CT_TAKEN) {
                return r;
            }
            curr = !(curr >= min && curr <= max) || curr == max
                   ? min : (uint16_t) (curr + 1);
        }
        if (attempts < range && attempts >= 16) {
            attempts /= 2;
            curr = (uint16_t) (min + pmd_random(pmd) % range);
        } else {
            break;
        }
    }
    *port = first;
    return CT_TAKEN;
}

/* The port range a translation searches when its action names none, by
 * the port the packet has (set_sport_range()): the privileged ports
 * below 512, those below 1024 from 600, or the ephemeral ones. */
static void
nat_default_range(uint16_t port, uint16_t *min, uint16_t *max)
{
    if (port < 512) {
        *min = 1;
        *max = 511;
    } else if (port < 1024) {
        *min = 600;
        *max = 1023;
    } else {
        *min = 1024;
        *max = 65535;
    }
}

/* The address 'hash' picks in [min, max] (get_addr_in_range()): an IPv4
 * range is taken whole, an IPv6 one up to 2^32 - 1 addresses from 'min'
 * (Open vSwitch's limit, nat_ipv6_addrs_delta()). */
static struct fdp_value
nat_pick_addr(const struct fdp__ct_nat *nat, bool ipv6, uint32_t hash)
{
    struct fdp_value a = nat->addr_min;

    if (!ipv6) {
        uint32_t lo = (uint32_t) nat->addr_min.lo;
        uint32_t hi = (uint32_t) nat->addr_max.lo;
        uint32_t range = hi >= lo ? hi - lo + 1 : 1;
        a.hi = 0;
        a.lo = lo + (range ? hash % range : hash);
        return a;
    }
    const struct fdp_value *mn = &nat->addr_min, *mx = &nat->addr_max;
    uint64_t delta;
    if (mn->hi == mx->hi && mn->lo <= mx->lo) {
        delta = mx->lo - mn->lo;
    } else if (mn->hi + 1 == mx->hi && mn->lo > mx->lo) {
        delta = UINT64_MAX - (mn->lo - mx->lo - 1);
    } else {
        delta = 0xfffffffe;
    }
    if (delta > 0xfffffffe) {
        delta = 0xfffffffe;
    }
    uint64_t off = hash % (delta + 1);
    a.lo = mn->lo + off;
    a.hi = mn->hi + (a.lo < mn->lo);
    return a;
}

/* Chooses the translation of record 'id' (its reply tuple is the
 * original's reverse) for 'nat' and publishes it, as Open vSwitch's
 * nat_get_unique_tuple(): the address from the range by a hash of the
 * range and the connection (or, without a range, the address the packet
 * has), one address only; then for TCP and UDP a port search.  SNAT
 * searches the source port: in the action's range from the hashed point,
 * or without one from the packet's own port in its class (so the port
 * stays when it is free).  DNAT first searches the destination port in
 * the action's range, if it names one, then the source port as SNAT
 * without a range does.  Other protocols get the address alone, if that
 * tuple is free.  'persistent', 'hash' and 'random' change nothing, as in
 * Open vSwitch 3.1's userspace datapath, which ignores them.  Returns
 * CT_EXHAUSTED when no candidate was free. */
/* What nat_commit() tries first and where it searches from. */
struct nat_plan {
    bool addr;                  /* An address from the range: 'a'. */
    struct fdp_value a;
    bool ports;                 /* TCP or UDP: ports are searched. */
    bool dsearch;               /* DNAT with a port range: the reply's
                                 * source port first, from 'dcurr' in
                                 * [pmin, pmax]. */
    uint16_t dcurr, pmin, pmax;
    uint16_t scurr, smin, smax; /* Then the reply's destination port. */
};

/* Plans the translation of 'c' by 'nat' (which has FDP__NAT_SRC or
 * FDP__NAT_DST); false if 'nat' has no address for the packet's
 * family. */
static bool
nat_plan(const struct fdp__ct *ct, const struct ct_ctx *c,
         const struct fdp__ct_nat *nat, struct nat_plan *p)
{
    bool snat = nat->flags & FDP__NAT_SRC;
    const struct ct_tup *t = &c->tup;

    p->addr = nat->flags & FDP__NAT_ADDR;
    if (p->addr && !(nat->flags & FDP__NAT_IPV6) != !t->ipv6) {
        /* A range of the other family has no address for this packet
         * (the flow should not have let it here). */
        return false;
    }

    /* nat_range_hash(): the range and the connection. */
    uint64_t h[8] = {
        nat->addr_min.hi, nat->addr_min.lo, nat->addr_max.hi,
        nat->addr_max.lo,
        (uint64_t) nat->port_min << 16 | nat->port_max,
        t->src.hi ^ t->dst.hi, t->src.lo ^ (t->dst.lo << 1),
        c->key.w[c->key.n_words - 1],
    };
    uint32_t hash = fdp_hash_fast(h, 8, ct->basis);
    if (p->addr) {
        p->a = nat_pick_addr(nat, t->ipv6, hash);
    }

    p->ports = t->proto == FDP_IPPROTO_TCP || t->proto == FDP_IPPROTO_UDP;
    p->pmin = nat->port_min;
    p->pmax = nat->port_max < p->pmin ? p->pmin : nat->port_max;
    bool ranged = nat->flags & FDP__NAT_PORT;
    uint32_t span = (uint32_t) p->pmax - p->pmin + 1;
    if (snat && ranged) {
        p->smin = p->pmin;
        p->smax = p->pmax;
        p->scurr = (uint16_t) (p->pmin + hash % span);
    } else {
        p->scurr = t->sport;
        nat_default_range(p->scurr, &p->smin, &p->smax);
    }
    p->dsearch = !snat && ranged;
    p->dcurr = (uint16_t) (p->pmin + hash % span);
    return true;
}

/* The reply tuple of 'c''s first candidate under 'p' (for a prefetch of
 * its home bucket). */
static void
nat_first_reply(const struct ct_ctx *c, const struct fdp__ct_nat *nat,
                const struct nat_plan *p, struct ct_tup *r)
{
    *r = c->tup;
    tup_reverse(r);
    if (p->addr) {
        if (nat->flags & FDP__NAT_SRC) {
            r->dst = p->a;
        } else {
            r->src = p->a;
        }
    }
    if (p->ports) {
        if (p->dsearch) {
            r->sport = p->dcurr;
        } else {
            r->dport = p->scurr;
        }
    }
}

static enum ct_commit
nat_commit(struct fdp__ct_pmd *pmd, uint32_t id, const struct ct_ctx *c,
           const struct fdp__ct_nat *nat, uint64_t now)
{
    struct fdp__ct *ct = pmd->ct;
    struct fdp__ct_conn *conn = &ct->conns[id];
    bool snat = nat->flags & FDP__NAT_SRC;
    struct nat_plan p;

    conn->nat = snat ? FDP__CT_NAT_SRC : FDP__CT_NAT_DST;
    if (!nat_plan(ct, c, nat, &p)) {
        return CT_EXHAUSTED;
    }
    if (p.addr) {
        /* The reply tuple's destination for SNAT, its source for DNAT. */
        int side = snat ? 1 : 0;
        if (c->tup.ipv6) {
            ct->conns6[id].addr[1][side][0] = p.a.hi;
            ct->conns6[id].addr[1][side][1] = p.a.lo;
        } else {
            conn->addr[1][side] = (uint32_t) p.a.lo;
        }
    }

    if (!p.ports) {
        enum ct_commit r = nat_try(ct, id, c, now);
        return r == CT_TAKEN ? CT_EXHAUSTED : r;
    }
    enum ct_commit r = CT_TAKEN;
    if (p.dsearch) {
        /* The reply tuple's source port is the original's destination. */
        conn->port[1][0] = p.dcurr;
        r = nat_search_port(pmd, id, c, 0, p.dcurr, p.pmin, p.pmax, now);
    }
    if (r == CT_TAKEN) {
        conn->port[1][1] = p.scurr;
        r = nat_search_port(pmd, id, c, 1, p.scurr, p.smin, p.smax, now);
    }
    return r == CT_TAKEN ? CT_EXHAUSTED : r;
}

/* Enters the connection of 'c', translated by 'nat' if nonnull (which has
 * FDP__NAT_SRC or FDP__NAT_DST). */
static enum ct_commit
conn_create(struct fdp__ct_pmd *pmd, const struct ct_ctx *c,
            const struct fdp__ct_nat *nat, uint64_t now, uint32_t *idp)
{
    struct fdp__ct *ct = pmd->ct;
    uint16_t zone = c->zone;

    uint32_t zl = ld32(&ct->zone_limit[zone]);
    if (!zl) {
        zl = ld32(&ct->default_zone_limit);
    }
    if ((zl && ld32(&ct->zone_count[zone]) >= zl)
        || ld32(&ct->n_conns) >= ld32(&ct->limit)) {
        return CT_FULL;
    }

    uint32_t id;
    if (!id_alloc(pmd, &id)) {
        return CT_FULL;
    }

    /* The record, written before it is published. */
    struct fdp__ct_conn *conn = &ct->conns[id];
    struct ct_tup rev = c->tup;
    tup_reverse(&rev);
    memset(conn, 0, offsetof(struct fdp__ct_conn, lock));
    conn->proto = c->tup.proto;
    conn->ipv6 = c->tup.ipv6;
    conn->zone = zone;
    const struct ct_tup *dirs[2] = { &c->tup, &rev };
    for (int d = 0; d < 2; d++) {
        conn->port[d][0] = dirs[d]->sport;
        conn->port[d][1] = dirs[d]->dport;
        if (conn->ipv6) {
            struct fdp__ct_conn6 *c6 = &ct->conns6[id];
            c6->addr[d][0][0] = dirs[d]->src.hi;
            c6->addr[d][0][1] = dirs[d]->src.lo;
            c6->addr[d][1][0] = dirs[d]->dst.hi;
            c6->addr[d][1][1] = dirs[d]->dst.lo;
        } else {
            conn->addr[d][0] = (uint32_t) dirs[d]->src.lo;
            conn->addr[d][1] = (uint32_t) dirs[d]->dst.lo;
        }
    }
    __atomic_store_n(&conn->lock, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&conn->dead, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&conn->mark, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&conn->label[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&conn->label[1], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&conn->limbo_next, 0, __ATOMIC_RELAXED);
    enum fdp__ct_tm tm;
    uint8_t l4_state = 0;
    memset(conn->peer, 0, sizeof conn->peer);
    if (conn->proto == FDP_IPPROTO_TCP) {
        fdp__ct_tcp_new_conn(conn, c->l4, c->l4_size, &tm);
    } else if (is_icmp(&c->tup)) {
        l4_state = CT_ICMP_FIRST;
        tm = FDP__CT_TM_ICMP_FIRST;
    } else {
        l4_state = CT_OTHER_FIRST;
        tm = FDP__CT_TM_OTHER_FIRST;
    }
    __atomic_store_n(&conn->l4_state, l4_state, __ATOMIC_RELAXED);
    conn_refresh(ct, conn, tm, now);

    /* The index: both directions under their homes' locks. */
    enum ct_commit r;
    if (nat) {
        r = nat_commit(pmd, id, c, nat, now);
    } else {
        struct ct_key rk;
        if (c->has_rkey) {
            rk = c->rkey;
        } else {
            key_make(&rk, &rev, zone, ct->basis);
        }
        r = conn_publish(ct, id, &c->key, &rk, now);
        if (r == CT_TAKEN) {
            /* Only a NAT connection's reply tuple can be another's
             * original tuple; without NAT it is this one's, so another
             * pmd entered it from the reply direction. */
            r = CT_RACED;
        }
    }
    if (r != CT_COMMITTED) {
        id_unalloc(pmd, id);
        return r;
    }

    __atomic_fetch_add(&ct->n_conns, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ct->zone_count[zone], 1, __ATOMIC_RELAXED);
    *idp = id;
    return CT_COMMITTED;
}

/* ---- The packet path (process_one(), write_ct_md()) ---- */

static void
set_mark_label(struct fdp__ct_conn *conn, const struct fdp__ct_args *args)
{
    if (!args->mark_mask && !args->label_mask.hi && !args->label_mask.lo) {
        return;
    }
    conn_lock(conn);
    uint32_t m = args->mark_mask;
    __atomic_store_n(&conn->mark, (conn->mark & ~m) | (args->mark & m),
                     __ATOMIC_RELAXED);
    uint64_t hi = args->label_mask.hi, lo = args->label_mask.lo;
    __atomic_store_n(&conn->label[0],
                     (conn->label[0] & ~hi) | (args->label.hi & hi),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&conn->label[1],
                     (conn->label[1] & ~lo) | (args->label.lo & lo),
                     __ATOMIC_RELAXED);
    conn_unlock(conn);
}

/* Fills the ct_* fields of 'res' from connection 'id' (write_ct_md()). */
static void
result_from_conn(const struct fdp__ct *ct, uint32_t id,
                 struct fdp__ct_result *res)
{
    const struct fdp__ct_conn *conn = &ct->conns[id];
    struct ct_tup orig;

    res->mark = __atomic_load_n(&conn->mark, __ATOMIC_RELAXED);
    res->label.hi = __atomic_load_n(&conn->label[0], __ATOMIC_RELAXED);
    res->label.lo = __atomic_load_n(&conn->label[1], __ATOMIC_RELAXED);
    res->has_tuple = true;
    conn_tup(ct, id, 0, &orig);
    tuple_out(&orig, &res->orig);
}

/* The cached connection of 'c' if the packet may take the fast path in
 * a ct() of zone 'c->zone' (conntrack_execute(): a cached connection of
 * the same zone, no force): true with '*idp' and '*replyp'.  A record
 * unlinked since is not taken (Open vSwitch's packet still holds the
 * freed connection; flowdp's id may have been reused). */
static bool
cached_conn(const struct fdp__ct *ct, const struct ct_ctx *c, bool force,
            uint32_t *idp, bool *replyp)
{
    uint32_t id = (c->cached & 0x7fffffffu) - 1;
    if (!c->cached || force || id >= ct->capacity) {
        return false;
    }
    const struct fdp__ct_conn *conn = &ct->conns[id];
    if (!__atomic_load_n(&conn->live, __ATOMIC_ACQUIRE)
        || __atomic_load_n(&conn->dead, __ATOMIC_ACQUIRE)
        || conn->zone != c->zone) {
        return false;
    }
    *idp = id;
    *replyp = (c->cached & 0x80000000u) != 0;
    return true;
}

/* process_one_fast(): a second ct() of the zone that cached the
 * connection.  The ct_state stays what the packet has (the key's, of
 * this zone); only NAT (handle_nat(), on a packet not yet translated in
 * this zone) and the mark and label change.  A ct() with nat drops the
 * cache. */
static void
process_one_fast(struct fdp__ct_pmd *pmd, const struct ct_ctx *c,
                 const struct fdp__ct_args *args, uint32_t id, bool reply,
                 struct fdp__ct_result *res)
{
    struct fdp__ct *ct = pmd->ct;
    uint8_t state = c->prior;

    if (args->nat && ct->conns[id].nat && c->ok
        && !(state & (FDP_CT_SNAT | FDP_CT_DNAT))) {
        /* Related or not: the state's +rel says (only an ICMP error is
         * related in a tracker without helpers). */
        struct ct_ctx fc = *c;
        fc.related = (state & FDP_CT_REL) != 0;
        state |= nat_packet(ct, id, &fc, reply);
    }
    res->zone = c->zone;
    res->state = state | FDP_CT_TRK;
    set_mark_label(&ct->conns[id], args);
    result_from_conn(ct, id, res);
    res->cached = args->nat ? 0 : c->cached;
}

static void
process_one(struct fdp__ct_pmd *pmd, const struct ct_ctx *c,
            const struct fdp__ct_args *args, uint64_t now,
            struct fdp__ct_result *res)
{
    struct fdp__ct *ct = pmd->ct;
    bool commit = args->commit || args->force;
    /* Open vSwitch adds to the ct_state the packet has from an earlier
     * ct() of this zone (conn_update_state()), except where it says
     * otherwise below. */
    uint8_t state = c->prior;
    uint32_t id = 0;
    bool reply = false;

    if (cached_conn(ct, c, args->force, &id, &reply)) {
        process_one_fast(pmd, c, args, id, reply, res);
        return;
    }

    res->zone = c->zone;
    res->mark = 0;
    res->label = (struct fdp_value) { 0, 0 };
    res->has_tuple = false;
    if (!c->ok) {
        /* A packet the tracker cannot parse: +inv, and whatever
         * connection it had cached stays (conntrack_execute() leaves
         * pkt->md.conn alone then). */
        res->state = FDP_CT_INV | FDP_CT_TRK;
        res->cached = c->cached;
        memset(&res->orig, 0, sizeof res->orig);
        fdp__count_add(&pmd->stats.n_invalid, 1);
        return;
    }

    bool found = ct_find(ct, lookup_key(c), now, &id, &reply);
    if (found && c->natted) {
        reply = !reply;
    }
    if (found && args->force && reply) {
        /* ct(force): a connection seen in its reply direction ends and
         * this packet starts a new one.  Open vSwitch's 'reply' stays
         * set (it goes to the cache as it is). */
        conn_kill(ct, id);
        found = false;
    }

    bool create = false;
    if (found) {
        struct fdp__ct_conn *conn = &ct->conns[id];
        if (c->related) {
            state |= FDP_CT_REL | (reply ? FDP_CT_RPL : 0);
        } else {
            switch (conn_update(ct, conn, c, reply, now)) {
            case FDP__CT_UPDATE_VALID:
                state = (uint8_t) ((state | FDP_CT_EST
                                    | (reply ? FDP_CT_RPL : 0))
                                   & ~FDP_CT_NEW);
                break;
            case FDP__CT_UPDATE_INVALID:
                state = FDP_CT_INV;
                break;
            case FDP__CT_UPDATE_NEW:
                conn_kill(ct, id);
                found = false;
                create = true;
                break;
            case FDP__CT_UPDATE_VALID_NEW:
                state |= FDP_CT_NEW;
                break;
            }
        }
    } else if (c->related) {
        state = FDP_CT_INV;     /* No new connection from an ICMP error. */
    } else {
        create = true;
    }

    if (create) {
        if (!valid_new(c)) {
            state = FDP_CT_INV;
        } else {
            state = FDP_CT_NEW;
            if (commit) {
                /* Plain "nat" sets up no translation (unlike Open
                 * vSwitch 3.1, whose commit then stores a reply tuple
                 * with address zero; see lib/ct-action.h). */
                const struct fdp__ct_nat *nat = args->nat;
                if (nat && !(nat->flags & (FDP__NAT_SRC | FDP__NAT_DST))) {
                    nat = NULL;
                }
                switch (conn_create(pmd, c, nat, now, &id)) {
                case CT_COMMITTED:
                    found = true;
                    fdp__count_add(&pmd->stats.n_created, 1);
                    if (nat) {
                        state |= nat_packet(ct, id, c, false);
                    }
                    break;
                case CT_FULL:
                    fdp__count_add(&pmd->stats.n_full, 1);
                    break;
                case CT_EXHAUSTED:
                    fdp__count_add(&pmd->stats.n_nat_exhausted, 1);
                    break;
                case CT_RACED:
                case CT_TAKEN:
                    break;
                }
            }
        }
    } else if (found && args->nat && ct->conns[id].nat
               && !(state & (FDP_CT_SNAT | FDP_CT_DNAT))) {
        /* handle_nat(): any nat(...), plain or not, applies an existing
         * connection's translation, whatever its ct_state says (+inv
         * too), unless an earlier ct() of this zone translated the
         * packet already (its +snat/+dnat, kept above). */
        state |= nat_packet(ct, id, c, reply);
    }

    res->state = state | FDP_CT_TRK;
    if (state & FDP_CT_INV) {
        fdp__count_add(&pmd->stats.n_invalid, 1);
    }
    res->has_tuple = true;
    res->cached = 0;
    if (found) {
        set_mark_label(&ct->conns[id], args);
        result_from_conn(ct, id, res);
        if (!args->nat) {
            res->cached = FDP__CT_CACHED(id, reply);
        }
    } else {
        tuple_out(&c->tup, &res->orig);
    }
}

void
fdp__ct_execute(struct fdp__ct_pmd *pmd, struct fdp__pkt *const *pkts,
                size_t n, const struct fdp__ct_args *args,
                const uint16_t *zones, uint64_t now_ms,
                struct fdp__ct_result *results)
{
    struct fdp__ct *ct = pmd->ct;
    struct ct_ctx ctx[CT_BATCH];
    bool commit = args->commit || args->force;
    bool nat_new = args->nat
                   && (args->nat->flags & (FDP__NAT_SRC | FDP__NAT_DST));

    fdp__rcu_read_lock();
    for (size_t start = 0; start < n; start += CT_BATCH) {
        size_t m = n - start < CT_BATCH ? n - start : CT_BATCH;

        /* Phase 1: parse and hash every packet, prefetch its home
         * bucket. */
        for (size_t i = 0; i < m; i++) {
            uint16_t zone = zones ? zones[start + i] : args->zone;
            if (ct_extract(pkts[start + i], zone, ct->basis, &ctx[i])) {
                __builtin_prefetch(&ct->buckets[home_of(
                                       ct, lookup_key(&ctx[i])->hash)]);
            }
        }

        /* Phase 2: prefetch the record of the first signature match.
         * A packet with none (and nothing overflowed from its home) is
         * new: if it may commit, prefetch what its commit writes, the
         * reply tuple's home bucket and the record it will get, so that
         * those misses too overlap across the batch. */
        uint32_t n_new = 0;
        for (size_t i = 0; i < m; i++) {
            ctx[i].has_rkey = false;
            if (!ctx[i].ok) {
                continue;
            }
            uint32_t hash = lookup_key(&ctx[i])->hash;
            const struct ct_bucket *b = &ct->buckets[home_of(ct, hash)];
            bool match = false;
            for (unsigned int mm = bucket_matches(b, hash); mm;
                 mm &= mm - 1) {
                int s = __builtin_ctz(mm);
                uint64_t v = __atomic_load_n(&b->slot[s], __ATOMIC_RELAXED);
                if ((uint32_t) (v >> 32) == hash && (uint32_t) v) {
                    uint32_t id = ((uint32_t) v - 1) >> 1;
                    __builtin_prefetch(&ct->conns[id]);
                    if (ctx[i].tup.ipv6) {
                        __builtin_prefetch(&ct->conns6[id]);
                    }
                    match = true;
                    break;
                }
            }
            if (!match && commit && !ctx[i].related && !ctx[i].natted
                && !__atomic_load_n(&b->overflow, __ATOMIC_RELAXED)) {
                if (!nat_new) {
                    struct ct_tup rev = ctx[i].tup;
                    tup_reverse(&rev);
                    key_make(&ctx[i].rkey, &rev, ctx[i].zone, ct->basis);
                    ctx[i].has_rkey = true;
                    __builtin_prefetch(&ct->buckets[home_of(
                                           ct, ctx[i].rkey.hash)], 1);
                } else {
                    struct nat_plan p;
                    if (nat_plan(ct, &ctx[i], args->nat, &p)) {
                        struct ct_tup r;
                        struct ct_key rk;
                        nat_first_reply(&ctx[i], args->nat, &p, &r);
                        key_make(&rk, &r, ctx[i].zone, ct->basis);
                        __builtin_prefetch(&ct->buckets[home_of(
                                               ct, rk.hash)], 1);
                    }
                }
                if (n_new < pmd->n_ids) {
                    uint32_t id = pmd->ids[pmd->n_ids - 1 - n_new++];
                    __builtin_prefetch(&ct->conns[id], 1);
                    if (ctx[i].tup.ipv6) {
                        __builtin_prefetch(&ct->conns6[id], 1);
                    }
                }
            }
        }

        /* Phase 3: look up, update and report, in packet order. */
        for (size_t i = 0; i < m; i++) {
            process_one(pmd, &ctx[i], args, now_ms, &results[start + i]);
        }
    }
    fdp__rcu_read_unlock();
    fdp__count_add(&pmd->stats.n_packets, n);
}

/* ---- Life cycle ---- */

static void *
ct_map(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    /* Lookups land on random records and buckets: with 4 KiB pages each
     * is a TLB miss too once the table passes a few MiB.  Huge pages
     * where the kernel has them (a hint; failure changes nothing). */
    madvise(p, size, MADV_HUGEPAGE);
    return p;
}

static void
ct_unmap(void *p, size_t size)
{
    if (p) {
        munmap(p, size);
    }
}

int
fdp__ct_create(uint32_t capacity, struct fdp__ct **ctp)
{
    *ctp = NULL;
    if (!capacity || capacity > FDP__CT_MAX_CAPACITY) {
        return EINVAL;
    }
    struct fdp__ct *ct = calloc(1, sizeof *ct);
    if (!ct) {
        return ENOMEM;
    }
    ct->capacity = capacity;
    ct->n_buckets = (uint32_t) (((uint64_t) capacity * 2 + CT_LOAD - 1)
                                / CT_LOAD);
    ct->conns_size = (size_t) capacity * sizeof *ct->conns;
    ct->conns6_size = (size_t) capacity * sizeof *ct->conns6;
    ct->buckets_size = ((size_t) ct->n_buckets + CT_MAX_PROBE - 1)
                       * sizeof *ct->buckets;
    ct->free_size = (size_t) capacity * sizeof *ct->free_ids;
    ct->conns = ct_map(ct->conns_size);
    ct->conns6 = ct_map(ct->conns6_size);
    ct->buckets = ct_map(ct->buckets_size);
    ct->free_ids = ct_map(ct->free_size);
    ct->zone_limit = calloc(N_ZONES, sizeof *ct->zone_limit);
    ct->zone_count = calloc(N_ZONES, sizeof *ct->zone_count);
    if (!ct->conns || !ct->conns6 || !ct->buckets || !ct->free_ids
        || !ct->zone_limit || !ct->zone_count) {
        fdp__ct_destroy(ct);
        return ENOMEM;
    }
    uint64_t seed = (uint64_t) (uintptr_t) ct ^ (uint64_t) (uintptr_t) &seed;
    ct->basis = (uint32_t) (seed ^ seed >> 32);
    ct->limit = capacity < FDP_CT_DEFAULT_LIMIT ? capacity
                : FDP_CT_DEFAULT_LIMIT;
    for (int tm = 0; tm < FDP__CT_N_TM; tm++) {
        ct->timeout_ms[tm] = ct_default_timeouts[tm] * 1000;
    }
    ct->tcp_seq_chk = true;
    pthread_mutex_init(&ct->pool_mutex, NULL);
    pthread_mutex_init(&ct->reclaim_mutex, NULL);
    *ctp = ct;
    return 0;
}

bool
fdp__ct_populate(struct fdp__ct *ct, size_t max_bytes)
{
    pthread_mutex_lock(&ct->reclaim_mutex);
    size_t done = ct->populated;
    size_t end = max_bytes < ct->buckets_size - done
                 ? done + max_bytes : ct->buckets_size;
    if (done < end) {
        uint8_t *base = (uint8_t *) ct->buckets;
#ifdef MADV_POPULATE_WRITE
        /* Faults the pages in writable without writing them. */
        size_t page = 4096;
        size_t from = done / page * page;
        if (madvise(base + from, end - from, MADV_POPULATE_WRITE))
#endif
        {
            /* An atomic add of zero to each page's first lock word: a
             * write fault that changes nothing a pmd could see. */
            for (size_t off = done / 4096 * 4096; off < end; off += 4096) {
                __atomic_fetch_add((uint32_t *) (base + off), 0,
                                   __ATOMIC_RELAXED);
            }
        }
        ct->populated = end;
    }
    bool all = ct->populated >= ct->buckets_size;
    pthread_mutex_unlock(&ct->reclaim_mutex);
    return all;
}

void
fdp__ct_destroy(struct fdp__ct *ct)
{
    if (!ct) {
        return;
    }
    ct_unmap(ct->conns, ct->conns_size);
    ct_unmap(ct->conns6, ct->conns6_size);
    ct_unmap(ct->buckets, ct->buckets_size);
    ct_unmap(ct->free_ids, ct->free_size);
    free(ct->zone_limit);
    free(ct->zone_count);
    free(ct->zone_timeout_ms);
    pthread_mutex_destroy(&ct->pool_mutex);
    pthread_mutex_destroy(&ct->reclaim_mutex);
    free(ct);
}

int
fdp__ct_pmd_create(struct fdp__ct *ct, struct fdp__ct_pmd **pmdp)
{
    struct fdp__ct_pmd *pmd = calloc(1, sizeof *pmd);
    *pmdp = pmd;
    if (!pmd) {
        return ENOMEM;
    }
    pmd->ct = ct;
    uint64_t seed = (uint64_t) (uintptr_t) pmd * 0x9e3779b97f4a7c15ull
                    ^ ct->basis;
    pmd->rng = seed ? seed : 1;
    return 0;
}

void
fdp__ct_pmd_destroy(struct fdp__ct_pmd *pmd)
{
    if (!pmd) {
        return;
    }
    struct fdp__ct *ct = pmd->ct;
    pthread_mutex_lock(&ct->pool_mutex);
    while (pmd->n_ids) {
        ct->free_ids[ct->n_free++] = pmd->ids[--pmd->n_ids];
    }
    pthread_mutex_unlock(&ct->pool_mutex);
    free(pmd);
}

void
fdp__ct_pmd_stats(const struct fdp__ct_pmd *pmd,
                  struct fdp__ct_pmd_stats *stats)
{
    stats->n_packets = __atomic_load_n(&pmd->stats.n_packets,
                                       __ATOMIC_RELAXED);
    stats->n_created = __atomic_load_n(&pmd->stats.n_created,
                                       __ATOMIC_RELAXED);
    stats->n_invalid = __atomic_load_n(&pmd->stats.n_invalid,
                                       __ATOMIC_RELAXED);
    stats->n_full = __atomic_load_n(&pmd->stats.n_full, __ATOMIC_RELAXED);
    stats->n_nat_exhausted = __atomic_load_n(&pmd->stats.n_nat_exhausted,
                                             __ATOMIC_RELAXED);
}

/* ---- Limits, timeouts, counts ---- */

int
fdp__ct_set_limit(struct fdp__ct *ct, uint32_t limit)
{
    if (!limit || limit > ct->capacity) {
        return EINVAL;
    }
    st32(&ct->limit, limit);
    return 0;
}

uint32_t
fdp__ct_get_limit(const struct fdp__ct *ct)
{
    return ld32(&ct->limit);
}

void
fdp__ct_set_zone_limit(struct fdp__ct *ct, uint16_t zone, uint32_t limit)
{
    st32(&ct->zone_limit[zone], limit);
}

void
fdp__ct_set_default_zone_limit(struct fdp__ct *ct, uint32_t limit)
{
    st32(&ct->default_zone_limit, limit);
}

uint32_t
fdp__ct_get_default_zone_limit(const struct fdp__ct *ct)
{
    return ld32(&ct->default_zone_limit);
}

uint32_t
fdp__ct_get_capacity(const struct fdp__ct *ct)
{
    return ct->capacity;
}

uint32_t
fdp__ct_get_zone_limit(const struct fdp__ct *ct, uint16_t zone)
{
    return ld32(&ct->zone_limit[zone]);
}

uint32_t
fdp__ct_count(const struct fdp__ct *ct)
{
    return ld32(&ct->n_conns);
}

uint32_t
fdp__ct_zone_count(const struct fdp__ct *ct, uint16_t zone)
{
    return ld32(&ct->zone_count[zone]);
}

int
fdp__ct_set_timeout(struct fdp__ct *ct, enum fdp__ct_tm tm, uint32_t seconds)
{
    /* Milliseconds must fit 31 bits, so that now + timeout never wraps a
     * 64-bit clock that a caller started anywhere sensible. */
    if ((unsigned int) tm >= FDP__CT_N_TM || !seconds
        || seconds > (UINT32_C(1) << 31) / 1000) {
        return EINVAL;
    }
    st32(&ct->timeout_ms[tm], seconds * 1000);
    return 0;
}

uint32_t
fdp__ct_get_timeout(const struct fdp__ct *ct, enum fdp__ct_tm tm)
{
    return (unsigned int) tm < FDP__CT_N_TM
           ? ld32(&ct->timeout_ms[tm]) / 1000 : 0;
}

/* Timeout policies.  Open vSwitch gives a zone a timeout policy (ovs-vsctl
 * add-zone-tp) whose attributes override the defaults; here a zone's row
 * of 'zone_timeout_ms' overrides the global timeouts, class by class.
 * The rows are allocated on the first override (2.8 MB, zero pages until
 * written) and published with a release store; they are never freed
 * before the tracker, so the packet path reads them with an acquire load
 * of the pointer and relaxed loads of the values, without a lock or an
 * RCU section of its own.  A change applies when a connection's timer is
 * next refreshed, as a global change does (and as Open vSwitch's
 * conn_update_expiration() reads the policy at each refresh). */
int
fdp__ct_set_zone_timeout(struct fdp__ct *ct, uint16_t zone,
                         enum fdp__ct_tm tm, uint32_t seconds)
{
    if ((unsigned int) tm >= FDP__CT_N_TM
        || seconds > (UINT32_C(1) << 31) / 1000) {
        return EINVAL;
    }
    uint32_t (*zt)[FDP__CT_N_TM] = __atomic_load_n(&ct->zone_timeout_ms,
                                                   __ATOMIC_ACQUIRE);
    if (!zt) {
        if (!seconds) {
            return 0;           /* Nothing to remove. */
        }
        uint32_t (*fresh)[FDP__CT_N_TM] = calloc(N_ZONES, sizeof *fresh);
        if (!fresh) {
            return ENOMEM;
        }
        /* Two first setters race: one row array wins, the other is
         * freed before anyone could have seen it. */
        if (__atomic_compare_exchange_n(&ct->zone_timeout_ms, &zt, fresh,
                                        false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            zt = fresh;
        } else {
            free(fresh);
        }
    }
    st32(&zt[zone][tm], seconds * 1000);
    return 0;
}

uint32_t
fdp__ct_get_zone_timeout(const struct fdp__ct *ct, uint16_t zone,
                         enum fdp__ct_tm tm)
{
    uint32_t (*zt)[FDP__CT_N_TM] = __atomic_load_n(&ct->zone_timeout_ms,
                                                   __ATOMIC_ACQUIRE);
    return (unsigned int) tm < FDP__CT_N_TM && zt
           ? ld32(&zt[zone][tm]) / 1000 : 0;
}

void
fdp__ct_set_tcp_seq_chk(struct fdp__ct *ct, bool on)
{
    __atomic_store_n(&ct->tcp_seq_chk, on, __ATOMIC_RELAXED);
}

bool
fdp__ct_get_tcp_seq_chk(const struct fdp__ct *ct)
{
    return __atomic_load_n(&ct->tcp_seq_chk, __ATOMIC_RELAXED);
}

size_t
fdp__ct_bytes_per_conn(bool ipv6)
{
    size_t index = (2 * sizeof(struct ct_bucket) + CT_LOAD - 1) / CT_LOAD;
    return sizeof(struct fdp__ct_conn)
           + (ipv6 ? sizeof(struct fdp__ct_conn6) : 0)
           + index + sizeof(uint32_t);
}

/* ---- Dump ---- */

static void
conn_entry(const struct fdp__ct *ct, uint32_t id, struct fdp__ct_entry *e)
{
    const struct fdp__ct_conn *c = &ct->conns[id];
    struct ct_tup t;

    memset(e, 0, sizeof *e);
    conn_tup(ct, id, 0, &t);
    tuple_out(&t, &e->orig);
    conn_tup(ct, id, 1, &t);
    tuple_out(&t, &e->reply);
    e->zone = c->zone;
    e->mark = __atomic_load_n(&c->mark, __ATOMIC_RELAXED);
    e->label.hi = __atomic_load_n(&c->label[0], __ATOMIC_RELAXED);
    e->label.lo = __atomic_load_n(&c->label[1], __ATOMIC_RELAXED);
    e->expiry_ms = __atomic_load_n(&c->expiry, __ATOMIC_RELAXED);
    e->tm = (enum fdp__ct_tm) __atomic_load_n(&c->tm, __ATOMIC_RELAXED);
    if (c->proto == FDP_IPPROTO_TCP) {
        /* The peers change under the lock; take it for a consistent
         * pair. */
        struct fdp__ct_conn *cc = (struct fdp__ct_conn *) c;
        conn_lock(cc);
        e->tcp_state[0] = cc->peer[0].state;
        e->tcp_state[1] = cc->peer[1].state;
        e->tcp_wscale[0] = cc->peer[0].wscale;
        e->tcp_wscale[1] = cc->peer[1].wscale;
        conn_unlock(cc);
    }
}

static bool
conn_listed(const struct fdp__ct *ct, uint32_t id, const uint16_t *zone,
            uint64_t now)
{
    const struct fdp__ct_conn *c = &ct->conns[id];
    return __atomic_load_n(&c->live, __ATOMIC_ACQUIRE)
           && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED)
           && now < __atomic_load_n(&c->expiry, __ATOMIC_RELAXED)
           && (!zone || c->zone == *zone);
}

void
fdp__ct_dump(struct fdp__ct *ct, const uint16_t *zone, uint64_t now_ms,
             bool (*cb)(const struct fdp__ct_entry *, void *aux), void *aux)
{
    uint32_t end = __atomic_load_n(&ct->fresh, __ATOMIC_ACQUIRE);
    for (uint32_t start = 0; start < end; start += CT_SLICE) {
        uint32_t stop = end - start < CT_SLICE ? end : start + CT_SLICE;
        fdp__rcu_read_lock();
        for (uint32_t id = start; id < stop; id++) {
            if (conn_listed(ct, id, zone, now_ms)) {
                struct fdp__ct_entry e;
                conn_entry(ct, id, &e);
                if (!cb(&e, aux)) {
                    fdp__rcu_read_unlock();
                    return;
                }
            }
        }
        fdp__rcu_read_unlock();
    }
}

/* ---- Reclaimers ---- */

uint32_t
fdp__ct_sweep(struct fdp__ct *ct, uint64_t now_ms, uint32_t budget,
              bool *wrapped)
{
    uint32_t n = 0;

    *wrapped = false;
    pthread_mutex_lock(&ct->reclaim_mutex);
    uint32_t end = __atomic_load_n(&ct->fresh, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < budget; i++) {
        if (ct->sweep_cursor >= end) {
            ct->sweep_cursor = 0;
            *wrapped = true;
            break;
        }
        uint32_t id = ct->sweep_cursor++;
        const struct fdp__ct_conn *c = &ct->conns[id];
        if (__atomic_load_n(&c->live, __ATOMIC_ACQUIRE)
            && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED)
            && now_ms >= __atomic_load_n(&c->expiry, __ATOMIC_RELAXED)
            && conn_kill(ct, id)) {
            n++;
        }
    }
    ct_reclaim(ct);
    pthread_mutex_unlock(&ct->reclaim_mutex);
    return n;
}

static bool
tuple_in(const struct fdp__ct_tuple *in, struct ct_tup *t)
{
    memset(t, 0, sizeof *t);
    t->src = in->src;
    t->dst = in->dst;
    t->proto = in->proto;
    t->ipv6 = in->ipv6;
    if (!t->ipv6) {
        t->src.hi = t->dst.hi = 0;
        t->src.lo &= 0xffffffffu;
        t->dst.lo &= 0xffffffffu;
    }
    if (is_icmp(t)) {
        if (in->src_port > 0xff || in->dst_port > 0xff) {
            return false;
        }
        t->sport = in->icmp_id;
        t->dport = (uint16_t) (in->src_port << 8 | in->dst_port);
    } else {
        t->sport = in->src_port;
        t->dport = in->dst_port;
    }
    return true;
}

uint32_t
fdp__ct_flush(struct fdp__ct *ct, const uint16_t *zone,
              const struct fdp__ct_tuple *tuple)
{
    uint32_t n = 0;

    pthread_mutex_lock(&ct->reclaim_mutex);
    if (tuple) {
        struct ct_tup t;
        if (tuple_in(tuple, &t)) {
            struct ct_key k;
            uint32_t id;
            bool reply;
            key_make(&k, &t, zone ? *zone : 0, ct->basis);
            fdp__rcu_read_lock();
            /* Any connection with this tuple, expired or not: the
             * earliest time finds them all. */
            if (ct_find(ct, &k, 0, &id, &reply) && conn_kill(ct, id)) {
                n++;
            }
            fdp__rcu_read_unlock();
        }
    } else {
        uint32_t end = __atomic_load_n(&ct->fresh, __ATOMIC_ACQUIRE);
        for (uint32_t id = 0; id < end; id++) {
            const struct fdp__ct_conn *c = &ct->conns[id];
            if (__atomic_load_n(&c->live, __ATOMIC_ACQUIRE)
                && !__atomic_load_n(&c->dead, __ATOMIC_RELAXED)
                && (!zone || c->zone == *zone) && conn_kill(ct, id)) {
                n++;
            }
        }
    }
    ct_reclaim(ct);
    pthread_mutex_unlock(&ct->reclaim_mutex);
    return n;
}

/* Flushes by a list of tuples (dp-ct.c's flush by partial tuples, which
 * finds its connections by a dump): as 'n' calls of fdp__ct_flush() with
 * a tuple, but waiting for a grace period once per CT_SLICE removals
 * rather than once per connection (a grace period is tens of
 * microseconds: a million of them was most of a large flush's time). */
uint32_t
fdp__ct_flush_tuples(struct fdp__ct *ct, const uint16_t *zones,
                     const struct fdp__ct_tuple *tuples, size_t n)
{
    uint32_t removed = 0;

    pthread_mutex_lock(&ct->reclaim_mutex);
    for (size_t i = 0; i < n; i++) {
        struct ct_tup t;
        if (tuple_in(&tuples[i], &t)) {
            struct ct_key k;
            uint32_t id;
            bool reply;
            key_make(&k, &t, zones[i], ct->basis);
            fdp__rcu_read_lock();
            if (ct_find(ct, &k, 0, &id, &reply) && conn_kill(ct, id)) {
                removed++;
            }
            fdp__rcu_read_unlock();
        }
        if (!((i + 1) % CT_SLICE)) {
            ct_reclaim(ct);
        }
    }
    ct_reclaim(ct);
    pthread_mutex_unlock(&ct->reclaim_mutex);
    return removed;
}
