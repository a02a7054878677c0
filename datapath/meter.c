/*
 * Meters: OpenFlow 1.3 meter bands as token buckets that packet threads
 * update without locks.
 *
 * What.  A meter has up to FDP_METER_MAX_BANDS bands, each a rate R (in
 * packets per second, or kilobits per second) and a burst B (packets or
 * kilobits; B = R when none is given, as Open vSwitch's datapath sets
 * it).  Each band is a token bucket of capacity B refilled at rate R, full
 * when the meter is made.  A packet costs one packet, or its bytes times
 * 8 bits; it conforms to a band if the bucket holds its cost (which is
 * then taken), and otherwise exceeds it (and takes nothing).  A packet
 * that exceeds some bands fires the one with the highest rate among them
 * (the first such band if rates tie): a drop band drops it, a dscp_remark
 * band raises its DSCP drop precedence.  These are the semantics of Open
 * vSwitch's dp_netdev_run_meter(), which keeps its bucket in milli-
 * packets or bits and refills it once per millisecond under a mutex.
 *
 * One word per bucket.  A bucket is kept as a single 64-bit time z, the
 * moment at which it would have been empty had it never been full (the
 * "theoretical arrival time" of the generic cell rate algorithm, ITU-T
 * I.371): at time t it holds min(B, (t - z) R) tokens.  Taking a cost c
 * moves z forward by c / R; refilling costs nothing, since the passing of
 * time is the refill.  A packet conforms if max(z, t - B/R) + c/R <= t.
 * So a thread reads z, decides the packets of its batch in order against
 * a local copy, and publishes the new z with one compare-and-swap; if
 * another thread moved z meanwhile it decides again from the new value.
 * No lock, and one atomic operation per band per batch of packets.
 *
 * Units.  Times are "ticks" of 1/16 ns: the cost of one packet at 10
 * Mpps is 1600 ticks, so the rounding of a cost (down, by less than one
 * tick) is below 0.1 % even at 100 Mpps.  A band keeps its cost per unit
 * (packet or bit) as a fixed-point number with 24 fraction bits, 'q':
 * pktps q = 16e9 * 2^24 / R, kbps q = 16e6 * 2^24 / R, and a cost of u
 * units is (u * q) >> 24, computed in 128 bits.  The clock starts at
 * 2^62 ticks when the table is made, so that t - B/R never wraps (B/R is
 * capped at 2^60 ticks, 2.3 years) and 2^63 ticks more (18 years) pass
 * before it ends.
 *
 * Worked example.  A pktps band of R = 1000, B = 2: one packet costs
 * 16e9 / 1000 = 16,000,000 ticks (1 ms), B/R = 32,000,000 (2 ms).  Made
 * at t0, z = t0 - 2 ms (full).  A batch of 3 packets at t0: the first
 * conforms (z becomes t0 - 1 ms), the second too (z = t0), the third
 * would need z + 1 ms <= t0 and exceeds.  Another batch 0.5 ms later: z =
 * t0 + 0 > t - 2 ms, z + 1 ms = t0 + 1 ms > t0 + 0.5 ms: exceeds; at t0 +
 * 1 ms a packet conforms again.  Rate R, burst B, as expected.
 *
 * The table.  Meters are found by their OpenFlow id (up to 2^32 - 2^16)
 * in an open-addressing hash table of pointers, linear probing, at most
 * half full: one multiplication and, almost always, one slot to read,
 * whatever the number of meters.  A meter's first cache line holds its
 * id and its counters, the second its first two bands, so a meter costs
 * the packet path three cache lines (slot and meter).  Writers are serialised
 * by the caller; readers (packet threads) look up inside an RCU
 * read-side section.  A removed meter's slot becomes a tombstone that
 * readers step over, and the meter is freed after a grace period; a
 * modified meter is a new meter stored into the same slot (its buckets
 * full and its counters zero, as Open vSwitch's datapath remakes it).
 * When live entries and tombstones pass half the slots, the table is
 * rebuilt into a new array, published, and the old one freed after a
 * grace period.
 *
 * Counters.  The meter's packet and byte counts are sharded as a flow's
 * (lib/rule.h): a packet thread that owns a shard adds with plain loads
 * and stores, one per batch; a locked add cost as much as the bucket's
 * compare-and-swap.  The bands' counts, which change only when packets
 * exceed them, are atomic additions.
 */
#include <config.h>

#include "datapath/meter.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datapath/bytes.h"
#include "datapath/execute.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/rule.h"
#include "lib/util.h"

/* Ticks per nanosecond, and where the clock starts (see "Units"). */
#define TICKS_PER_NS 16
#define TICK_ORIGIN (UINT64_C(1) << 62)
#define MAX_TAU (UINT64_C(1) << 60)
/* Fraction bits of a band's cost per unit. */
#define Q_SHIFT 24
/* Ticks per second. */
#define TICKS_PER_SEC (UINT64_C(1000000000) * TICKS_PER_NS)

/* A band as the packet path reads it: 32 bytes, so that a meter's header
 * and its first band share a cache line. */
struct band {
    uint64_t z;                 /* Atomic: the bucket (see "One word"). */
    uint64_t q;                 /* Ticks per unit, Q_SHIFT fraction bits. */
    uint64_t tau;               /* B / R, in ticks. */
    uint32_t rate;
    uint8_t type;               /* enum fdp_meter_band_type. */
    uint8_t prec_level;
    uint16_t pad;
};
static_assert(sizeof(struct band) == 32, "a band is half a cache line");

/* What only dumps and statistics read. */
struct band_cold {
    uint32_t burst_size;        /* As configured (0: none given). */
    uint64_t n_packets;         /* Atomic: packets that fired the band. */
    uint64_t n_bytes;           /* Atomic. */
};

/* A meter: its first cache line holds what finds it and its packet
 * counters, sharded as a flow's are (lib/rule.h: a packet thread owning a
 * shard adds with plain loads and stores, the others share the last with
 * locked adds); its bands follow, band 0 and 1 on the second line. */
struct fdp__meter {
    uint32_t id;
    uint16_t flags;             /* FDP_METER_*. */
    uint16_t n_bands;
    struct meter_cold *cold;
    struct {
        uint64_t n_packets;     /* Atomic. */
        uint64_t n_bytes;       /* Atomic. */
    } shard[FDP__STATS_SHARDS];
    struct band bands[];
};
static_assert(sizeof(struct fdp__meter) == 64,
              "a meter's header is a cache line");

struct meter_cold {
    struct rcu_head rcu;
    uint64_t created_ns;
    struct band_cold bands[FDP_METER_MAX_BANDS];
};

/* A removed meter's slot (see "The table"). */
#define TOMBSTONE ((struct fdp__meter *) (uintptr_t) 1)

struct meter_index {
    struct rcu_head rcu;
    uint32_t mask;              /* Slots - 1 (a power of two less one). */
    struct fdp__meter *slots[]; /* Atomic: NULL, TOMBSTONE or a meter. */
};

/* The fewest slots an index has. */
#define MIN_SLOTS 64

struct fdp__meters {
    struct meter_index *index;  /* RCU. */
    size_t n;                   /* Meters. */
    size_t n_tombs;             /* Tombstones in 'index'. */
    fdp__meter_clock_fn *clock;
    void *clock_aux;
};

/* ---------------------------------------------------------------------- */
/* The clock.                                                              */

static uint64_t
monotonic_ns(void *aux)
{
    struct timespec ts;

    (void) aux;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The default clock: the TSC scaled to nanoseconds, where the CPU says
 * its TSC is invariant (constant rate, running in every state), else
 * CLOCK_MONOTONIC.  A packet thread reads the clock once per meter and
 * batch, and CLOCK_MONOTONIC cost 40 to 200 ns a read on the virtual
 * machines measured (kvm-clock): more than the rest of a meter.  The
 * scale comes from two (TSC, CLOCK_MONOTONIC) pairs 2 ms apart, each the
 * tightest of several brackets [TSC, clock, TSC], so that the scale is
 * off by well under 0.1 % even when a read is preempted. */
struct tsc_clock {
    uint64_t tsc0, ns0;
    uint64_t mult;              /* ns per cycle, 32 fraction bits. */
};

static struct tsc_clock tsc_clock;

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

static uint64_t
tsc_ns(void *aux)
{
    const struct tsc_clock *c = aux;
    uint64_t dt = __rdtsc() - c->tsc0;

    return c->ns0 + (uint64_t) (((unsigned __int128) dt * c->mult) >> 32);
}

/* A (TSC, ns) pair: the tightest of 8 brackets. */
static void
tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;

    for (int i = 0; i < 8; i++) {
        uint64_t a = __rdtsc();
        uint64_t t = monotonic_ns(NULL);
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = t;
        }
    }
}

static bool
tsc_calibrate(struct tsc_clock *c)
{
    unsigned int eax, ebx, ecx, edx;

    /* CPUID 0x80000007, EDX bit 8: invariant TSC. */
    if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) || !(edx & 256)) {
        return false;
    }
    uint64_t tsc1, ns1, tsc2, ns2;
    tsc_pair(&tsc1, &ns1);
    do {
        tsc_pair(&tsc2, &ns2);
    } while (ns2 - ns1 < 2000000);
    if (tsc2 <= tsc1) {
        return false;
    }
    c->tsc0 = tsc2;
    c->ns0 = ns2;
    c->mult = (uint64_t) (((unsigned __int128) (ns2 - ns1) << 32)
                          / (tsc2 - tsc1));
    return c->mult != 0;
}
#else
static uint64_t
tsc_ns(void *aux)
{
    return monotonic_ns(aux);
}

static bool
tsc_calibrate(struct tsc_clock *c)
{
    (void) c;
    return false;
}
#endif

/* The default clock, chosen (and calibrated) once per process. */
static pthread_once_t default_clock_once = PTHREAD_ONCE_INIT;
static fdp__meter_clock_fn *default_clock = monotonic_ns;

static void
choose_default_clock(void)
{
    if (tsc_calibrate(&tsc_clock)) {
        default_clock = tsc_ns;
    }
}

uint64_t
fdp__meters_now(const struct fdp__meters *ms)
{
    return ms->clock(ms->clock_aux);
}

/* 'now_ns' as ticks from the origin.  A clock's value read before the
 * table's first (another thread's, a moment earlier) gives the origin:
 * times only compare, so a tick at the origin simply conforms less. */
static inline uint64_t
ticks(uint64_t now_ns)
{
    return now_ns * TICKS_PER_NS + TICK_ORIGIN;
}

/* ---------------------------------------------------------------------- */
/* The table.                                                              */

static inline uint32_t
slot_of(uint32_t id, uint32_t mask)
{
    uint32_t h = id * UINT32_C(0x9e3779b1);    /* Fibonacci hashing. */

    return (h ^ (h >> 16)) & mask;
}

static struct meter_index *
index_create(uint32_t n_slots)
{
    struct meter_index *ix = calloc(1, sizeof *ix
                                       + n_slots * sizeof ix->slots[0]);
    if (ix) {
        ix->mask = n_slots - 1;
    }
    return ix;
}

static void
free_index(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(caa_container_of(head, struct meter_index, rcu));
}

static void
free_meter_now(struct fdp__meter *m)
{
    if (m) {
        free(m->cold);
        free(m);
    }
}

static void
free_meter(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    struct meter_cold *cold = caa_container_of(head, struct meter_cold, rcu);
    /* The meter's header is found from its cold part's first word. */
    struct fdp__meter *m;
    memcpy(&m, cold + 1, sizeof m);
    free_meter_now(m);
}

struct fdp__meter *
fdp__meters_find(const struct fdp__meters *ms, uint32_t id)
{
    const struct meter_index *ix = FDP_RCU_GET(ms->index);

    if (!ix) {
        return NULL;
    }
    for (uint32_t i = slot_of(id, ix->mask);; i = (i + 1) & ix->mask) {
        struct fdp__meter *m = FDP_RCU_GET(ix->slots[i]);
        if (!m) {
            return NULL;
        }
        if (m != TOMBSTONE && m->id == id) {
            return m;
        }
    }
}

/* The slot of meter 'id' in 'ix', or UINT32_MAX. */
static uint32_t
find_slot(const struct meter_index *ix, uint32_t id)
{
    for (uint32_t i = slot_of(id, ix->mask);; i = (i + 1) & ix->mask) {
        struct fdp__meter *m = ix->slots[i];
        if (!m) {
            return UINT32_MAX;
        }
        if (m != TOMBSTONE && m->id == id) {
            return i;
        }
    }
}

/* Puts 'm' (not in 'ix') at the first free slot of its probe. */
static void
index_put(struct meter_index *ix, struct fdp__meter *m)
{
    uint32_t i = slot_of(m->id, ix->mask);

    while (ix->slots[i] && ix->slots[i] != TOMBSTONE) {
        i = (i + 1) & ix->mask;
    }
    FDP_RCU_SET(ix->slots[i], m);
}

/* Makes room for one more meter: a new index, twice the live meters'
 * need, if live meters and tombstones would pass half the slots. */
static int
index_reserve(struct fdp__meters *ms)
{
    struct meter_index *old = ms->index;
    size_t used = ms->n + ms->n_tombs + 1;

    if (old && used * 2 <= (size_t) old->mask + 1) {
        return 0;
    }
    uint32_t n_slots = MIN_SLOTS;
    while ((size_t) n_slots < (ms->n + 1) * 4) {
        n_slots *= 2;
    }
    struct meter_index *ix = index_create(n_slots);
    if (!ix) {
        return ENOMEM;
    }
    for (uint32_t i = 0; old && i <= old->mask; i++) {
        if (old->slots[i] && old->slots[i] != TOMBSTONE) {
            index_put(ix, old->slots[i]);
        }
    }
    FDP_RCU_SET(ms->index, ix);
    ms->n_tombs = 0;
    if (old) {
        fdp__rcu_defer(&old->rcu, free_index);
    }
    return 0;
}

struct fdp__meters *
fdp__meters_create(void)
{
    struct fdp__meters *ms = calloc(1, sizeof *ms);

    pthread_once(&default_clock_once, choose_default_clock);
    if (ms) {
        ms->clock = default_clock;
        ms->clock_aux = &tsc_clock;
    }
    return ms;
}

void
fdp__meters_destroy(struct fdp__meters *ms)
{
    if (!ms) {
        return;
    }
    struct meter_index *ix = ms->index;
    if (ix) {
        /* Packet threads may still hold meters from a lookup. */
        fdp__rcu_synchronize();
        for (uint32_t i = 0; i <= ix->mask; i++) {
            if (ix->slots[i] && ix->slots[i] != TOMBSTONE) {
                free_meter_now(ix->slots[i]);
            }
        }
        free(ix);
    }
    free(ms);
}

void
fdp__meters_set_clock(struct fdp__meters *ms, fdp__meter_clock_fn *clock,
                      void *aux)
{
    pthread_once(&default_clock_once, choose_default_clock);
    ms->clock = clock ? clock : default_clock;
    ms->clock_aux = clock ? aux : &tsc_clock;
}

/* ---------------------------------------------------------------------- */
/* Making meters.                                                          */

static bool
config_valid(const struct fdp_meter_config *c)
{
    if (!c->id || c->id > FDP_METER_MAX_ID || !c->n_bands
        || c->n_bands > FDP_METER_MAX_BANDS
        || c->flags & ~(FDP_METER_KBPS | FDP_METER_PKTPS | FDP_METER_BURST
                        | FDP_METER_STATS)) {
        return false;
    }
    for (unsigned int i = 0; i < c->n_bands; i++) {
        const struct fdp_meter_band *b = &c->bands[i];
        if (!b->rate || (b->type != FDP_METER_BAND_DROP
                         && b->type != FDP_METER_BAND_DSCP_REMARK)) {
            return false;
        }
    }
    return true;
}

/* A new meter from 'c' at time 'now' (ns), its buckets full. */
static struct fdp__meter *
meter_create(const struct fdp_meter_config *c, uint64_t now)
{
    size_t size = sizeof(struct fdp__meter) + c->n_bands * sizeof(struct band);
    /* Cache-line aligned, so the header and band 0 share a line. */
    struct fdp__meter *m = aligned_alloc(64, (size + 63) & ~(size_t) 63);
    /* The cold part ends with a pointer back to the meter (free_meter()). */
    struct meter_cold *cold = calloc(1, sizeof *cold + sizeof m);

    if (!m || !cold) {
        free(m);
        free(cold);
        return NULL;
    }
    memset(m, 0, size);
    memcpy(cold + 1, &m, sizeof m);
    m->id = c->id;
    m->flags = c->flags;
    m->n_bands = c->n_bands;
    m->cold = cold;
    cold->created_ns = now;
    /* Open vSwitch counts in kbps unless pktps is given alone. */
    bool pktps = (c->flags & FDP_METER_PKTPS) != 0;
    for (unsigned int i = 0; i < c->n_bands; i++) {
        const struct fdp_meter_band *cb = &c->bands[i];
        struct band *b = &m->bands[i];
        uint64_t burst = cb->burst_size ? cb->burst_size : cb->rate;
        unsigned __int128 per_unit = pktps ? TICKS_PER_SEC
                                           : TICKS_PER_SEC / 1000;
        b->q = (uint64_t) ((per_unit << Q_SHIFT) / cb->rate);
        /* The burst in units: packets, or kilobits as bits. */
        unsigned __int128 tau = per_unit * (pktps ? burst : burst * 1000)
                                / cb->rate;
        b->tau = tau > MAX_TAU ? MAX_TAU : (uint64_t) tau;
        b->z = ticks(now) - b->tau;
        b->rate = cb->rate;
        b->type = cb->type;
        b->prec_level = cb->prec_level;
        cold->bands[i].burst_size = cb->burst_size;
    }
    return m;
}

int
fdp__meters_set(struct fdp__meters *ms, const struct fdp_meter_config *c,
                bool create)
{
    if (!config_valid(c)) {
        return EINVAL;
    }
    uint32_t slot = ms->index ? find_slot(ms->index, c->id) : UINT32_MAX;
    if (create && slot != UINT32_MAX) {
        return EEXIST;
    }
    if (!create && slot == UINT32_MAX) {
        return ENOENT;
    }
    if (create && ms->n >= FDP_METER_MAX_METERS) {
        return ENOSPC;
    }
    struct fdp__meter *m = meter_create(c, fdp__meters_now(ms));
    if (!m) {
        return ENOMEM;
    }
    if (!create) {
        struct fdp__meter *old = ms->index->slots[slot];
        FDP_RCU_SET(ms->index->slots[slot], m);
        fdp__rcu_defer(&old->cold->rcu, free_meter);
        return 0;
    }
    int error = index_reserve(ms);
    if (error) {
        free_meter_now(m);
        return error;
    }
    /* A tombstone the probe meets first is reused: readers looking for
     * another id step over the new meter as they stepped over it. */
    uint32_t i = slot_of(c->id, ms->index->mask);
    while (ms->index->slots[i] && ms->index->slots[i] != TOMBSTONE) {
        i = (i + 1) & ms->index->mask;
    }
    ms->n_tombs -= ms->index->slots[i] == TOMBSTONE;
    FDP_RCU_SET(ms->index->slots[i], m);
    ms->n++;
    return 0;
}

int
fdp__meters_del(struct fdp__meters *ms, uint32_t id)
{
    uint32_t slot = ms->index ? find_slot(ms->index, id) : UINT32_MAX;

    if (slot == UINT32_MAX) {
        return ENOENT;
    }
    struct fdp__meter *old = ms->index->slots[slot];
    FDP_RCU_SET(ms->index->slots[slot], TOMBSTONE);
    ms->n--;
    ms->n_tombs++;
    fdp__rcu_defer(&old->cold->rcu, free_meter);
    return 0;
}

int
fdp__meters_get(struct fdp__meters *ms, uint32_t id,
                struct fdp_meter_config *c, struct fdp_meter_stats *st)
{
    uint32_t slot = ms->index ? find_slot(ms->index, id) : UINT32_MAX;

    if (slot == UINT32_MAX) {
        return ENOENT;
    }
    const struct fdp__meter *m = ms->index->slots[slot];
    if (c) {
        memset(c, 0, sizeof *c);
        c->id = m->id;
        c->flags = m->flags;
        c->n_bands = m->n_bands;
        for (unsigned int i = 0; i < m->n_bands; i++) {
            c->bands[i] = (struct fdp_meter_band) {
                .type = m->bands[i].type,
                .prec_level = m->bands[i].prec_level,
                .rate = m->bands[i].rate,
                .burst_size = m->cold->bands[i].burst_size,
            };
        }
    }
    if (st) {
        memset(st, 0, sizeof *st);
        st->id = m->id;
        for (unsigned int s = 0; s < FDP__STATS_SHARDS; s++) {
            st->packet_in_count += __atomic_load_n(&m->shard[s].n_packets,
                                                   __ATOMIC_RELAXED);
            st->byte_in_count += __atomic_load_n(&m->shard[s].n_bytes,
                                                 __ATOMIC_RELAXED);
        }
        uint64_t now = fdp__meters_now(ms);
        st->duration_ns = now > m->cold->created_ns
                          ? now - m->cold->created_ns : 0;
        st->n_bands = m->n_bands;
        for (unsigned int i = 0; i < m->n_bands; i++) {
            const struct band_cold *bc = &m->cold->bands[i];
            st->bands[i].packet_count = __atomic_load_n(&bc->n_packets,
                                                        __ATOMIC_RELAXED);
            st->bands[i].byte_count = __atomic_load_n(&bc->n_bytes,
                                                      __ATOMIC_RELAXED);
        }
    }
    return 0;
}

static int
compare_ids(const void *a_, const void *b_)
{
    uint32_t a = *(const uint32_t *) a_, b = *(const uint32_t *) b_;

    return a < b ? -1 : a > b;
}

size_t
fdp__meters_list(struct fdp__meters *ms, uint32_t *ids, size_t max)
{
    const struct meter_index *ix = ms->index;
    size_t n = 0;

    if (max < ms->n || !ids) {
        return ms->n;
    }
    for (uint32_t i = 0; ix && i <= ix->mask; i++) {
        if (ix->slots[i] && ix->slots[i] != TOMBSTONE) {
            ids[n++] = ix->slots[i]->id;
        }
    }
    qsort(ids, n, sizeof *ids, compare_ids);
    return n;
}

size_t
fdp__meters_count(const struct fdp__meters *ms)
{
    return ms->n;
}

/* ---------------------------------------------------------------------- */
/* Running meters (see "One word per bucket").                             */

/* The cost of 'units' (packets or bits) in band 'b', in ticks. */
static inline uint64_t
cost(const struct band *b, uint64_t units)
{
    return (uint64_t) (((unsigned __int128) units * b->q) >> Q_SHIFT);
}

/* Phase 1 of fdp__meter_run() for band 'b': decides the packets against
 * the bucket and takes their costs with one compare-and-swap.  Returns a
 * bit per packet that exceeded the band. */
static uint64_t
band_run(struct band *b, const uint64_t units[], uint32_t n, uint64_t now)
{
    uint64_t z0 = __atomic_load_n(&b->z, __ATOMIC_RELAXED);

    for (;;) {
        uint64_t z = z0 > now - b->tau ? z0 : now - b->tau;
        uint64_t exceeded = 0;
        bool took = false;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t c = cost(b, units[i]);
            if (z + c <= now) {
                z += c;
                took = true;
            } else {
                exceeded |= UINT64_C(1) << i;
            }
        }
        /* Relaxed: the bucket guards no other memory. */
        if (!took || __atomic_compare_exchange_n(&b->z, &z0, z, true,
                                                 __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED)) {
            return exceeded;
        }
        /* Another thread took tokens: decide again from its z (now in
         * 'z0'). */
    }
}

void
fdp__meter_run(struct fdp__meter *m, const uint32_t sizes[], uint32_t n,
               uint64_t now_ns, unsigned int shard, int8_t fired[])
{
    uint64_t units[64];
    uint32_t best_rate[64];
    uint64_t now = ticks(now_ns);
    uint64_t bytes = 0;
    bool pktps = (m->flags & FDP_METER_PKTPS) != 0;

    if (n > 64) {
        n = 64;
    }
    for (uint32_t i = 0; i < n; i++) {
        bytes += sizes[i];
        units[i] = pktps ? 1 : (uint64_t) sizes[i] * 8;
        fired[i] = -1;
        best_rate[i] = 0;
    }
    if (shard < FDP__STATS_SHARED) {
        uint64_t *p = &m->shard[shard].n_packets;
        uint64_t *b = &m->shard[shard].n_bytes;
        __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n,
                         __ATOMIC_RELAXED);
        __atomic_store_n(b, __atomic_load_n(b, __ATOMIC_RELAXED) + bytes,
                         __ATOMIC_RELAXED);
    } else {
        __atomic_fetch_add(&m->shard[FDP__STATS_SHARED].n_packets, n,
                           __ATOMIC_RELAXED);
        __atomic_fetch_add(&m->shard[FDP__STATS_SHARED].n_bytes, bytes,
                           __ATOMIC_RELAXED);
    }

    /* Phase 1: every band's bucket; phase 2: the band each packet fires,
     * the one of highest rate among those it exceeds. */
    for (unsigned int k = 0; k < m->n_bands; k++) {
        struct band *b = &m->bands[k];
        uint64_t exceeded = band_run(b, units, n, now);
        for (; exceeded; exceeded &= exceeded - 1) {
            unsigned int i = (unsigned int) __builtin_ctzll(exceeded);
            if (b->rate > best_rate[i]) {
                best_rate[i] = b->rate;
                fired[i] = (int8_t) k;
            }
        }
    }

    /* Phase 3: the bands' counters, one addition per band fired. */
    if (FDP_UNLIKELY(m->n_bands > 1)) {
        for (unsigned int k = 0; k < m->n_bands; k++) {
            uint64_t np = 0, nb = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (fired[i] == (int8_t) k) {
                    np++;
                    nb += sizes[i];
                }
            }
            if (np) {
                struct band_cold *bc = &m->cold->bands[k];
                __atomic_fetch_add(&bc->n_packets, np, __ATOMIC_RELAXED);
                __atomic_fetch_add(&bc->n_bytes, nb, __ATOMIC_RELAXED);
            }
        }
    } else {
        uint64_t np = 0, nb = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (fired[i] == 0) {
                np++;
                nb += sizes[i];
            }
        }
        if (np) {
            struct band_cold *bc = &m->cold->bands[0];
            __atomic_fetch_add(&bc->n_packets, np, __ATOMIC_RELAXED);
            __atomic_fetch_add(&bc->n_bytes, nb, __ATOMIC_RELAXED);
        }
    }
}

uint8_t
fdp__meter_remark_dscp(uint8_t dscp, unsigned int prec_level)
{
    unsigned int prec = (dscp >> 1) & 3;

    prec = prec + prec_level > 3 ? 3 : prec + prec_level;
    return (uint8_t) ((dscp & ~6u & 0x3f) | prec << 1);
}

/* Raises the drop precedence of IP packet 'pkt''s DSCP by 'prec_level'
 * (fixing the IPv4 header checksum); other packets have no DSCP. */
static void
remark(struct fdp__pkt *pkt, unsigned int prec_level)
{
    uint64_t type = (uint64_t) fdp__key_get(&pkt->key, FDP_F_DL_TYPE);

    if (pkt->layout.l3 < 0) {
        return;
    }
    uint8_t *h = pkt->data + pkt->layout.l3;
    if (type == FDP_ETH_TYPE_IP) {
        uint8_t dscp = fdp__meter_remark_dscp(h[1] >> 2, prec_level);
        uint32_t ihl = (h[0] & 0xf) * 4u;
        h[1] = (uint8_t) (dscp << 2 | (h[1] & 3));
        h[10] = h[11] = 0;
        uint16_t sum = fdp__csum(0, h, ihl);
        h[10] = (uint8_t) (sum >> 8);
        h[11] = (uint8_t) sum;
    } else if (type == FDP_ETH_TYPE_IPV6) {
        /* The traffic class is bits 4-11 of the header's first 16 bits. */
        uint16_t w = fdp__get16(h);
        uint8_t dscp = fdp__meter_remark_dscp((uint8_t) (w >> 6) & 0x3f,
                                              prec_level);
        w = (uint16_t) ((w & ~(0x3fu << 6)) | (unsigned int) dscp << 6);
        h[0] = (uint8_t) (w >> 8);
        h[1] = (uint8_t) w;
    }
}

void
fdp__meters_apply(const struct fdp__meters *ms, uint32_t id,
                  struct fdp__pkt *pkts[], uint32_t n, uint64_t now_ns,
                  unsigned int shard, bool keep[])
{
    struct fdp__meter *m = fdp__meters_find(ms, id);
    uint32_t sizes[64];
    int8_t fired[64];

    for (uint32_t i = 0; i < n; i++) {
        keep[i] = true;
    }
    if (!m) {
        return;
    }
    for (uint32_t done = 0; done < n; done += 64) {
        uint32_t k = n - done < 64 ? n - done : 64;
        for (uint32_t i = 0; i < k; i++) {
            sizes[i] = pkts[done + i]->size;
        }
        fdp__meter_run(m, sizes, k, now_ns, shard, fired);
        for (uint32_t i = 0; i < k; i++) {
            if (fired[i] < 0) {
                continue;
            }
            const struct band *b = &m->bands[fired[i]];
            if (b->type == FDP_METER_BAND_DROP) {
                keep[done + i] = false;
            } else {
                remark(pkts[done + i], b->prec_level);
            }
        }
    }
}

/* ---------------------------------------------------------------------- */
/* The public functions, on a datapath's table.                            */

int
fdp_dp_meter_set(struct fdp_dp *dp, const struct fdp_meter_config *c,
                 bool create)
{
    return fdp__meters_set(fdp__dp_meters(dp), c, create);
}

int
fdp_dp_meter_del(struct fdp_dp *dp, uint32_t id)
{
    return fdp__meters_del(fdp__dp_meters(dp), id);
}

int
fdp_dp_meter_get(struct fdp_dp *dp, uint32_t id, struct fdp_meter_config *c,
                 struct fdp_meter_stats *st)
{
    return fdp__meters_get(fdp__dp_meters(dp), id, c, st);
}

size_t
fdp_dp_meter_list(struct fdp_dp *dp, uint32_t *ids, size_t max)
{
    return fdp__meters_list(fdp__dp_meters(dp), ids, max);
}
