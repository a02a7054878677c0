/*
 * The MAC learning table of NORMAL: which port each (MAC, VLAN) was last
 * seen on, as Open vSwitch's lib/mac-learning.c keeps it for
 * ofproto-dpif-xlate's xlate_normal().
 *
 * Theory of operation
 * ===================
 *
 * What it is for.  The NORMAL action (datapath/normal.c) forwards a frame
 * to the port its destination was last seen on, or floods it; it learns
 * from every frame's source.  This table is what it learns into: at most
 * 'max_entries' entries (Open vSwitch's mac-table-size, 8192 by default),
 * each forgotten 'aging' seconds after its address was last seen (Open
 * vSwitch's mac-aging-time, 300 s).
 *
 * Who writes.  The pmds never change which entries the table holds
 * (DESIGN.md, "State and the outside world"): a pmd that sees a source
 * the table does not know, or knows on another port, queues a note (a
 * bounded lock-free multi-producer queue, Vyukov's array queue: each
 * cell carries a sequence number that says whether it is free for the
 * producer at position P, P, or full for the consumer, P + 1), and the
 * writer, the fdb's thread, applies the notes under the fdb's mutex
 * every millisecond while there are some, and less often (up to 64 ms)
 * while there are none (fdb_thread()).  The only store a pmd makes is the "last seen" second of
 * an entry it found on the right port, and only when the second changed,
 * so an address that keeps sending costs one store per second, not one
 * per packet: it is a statistic like a flow's counters, which the writer
 * reads to age entries.  Until a note is applied, the address's frames
 * are forwarded as if unknown (flooded) or to its old port: Open vSwitch
 * behaves the same way between a packet's upcall and the revalidation
 * that follows a MAC move.
 *
 * Layout.  A table is 2^k buckets of one cache line each: a sequence
 * counter and three 16-byte slots {key, port, last seen}, the key being
 * (1 << 63) | vlan << 48 | mac so that 0 is an empty slot.  An address
 * may sit in either of two buckets, chosen by two keyed hashes (random
 * per table, so that nobody can pick MACs that share buckets without
 * knowing the keys): the first if it has room, else the second, and then
 * the first bucket counts it in its 'overflow'.  A lookup reads the
 * second bucket only if the first's overflow is nonzero.  The table has
 * at least 4 * max_entries / 3 buckets, so it is at most a quarter full
 * (buckets_for()), few buckets overflow, and a lookup reads one line,
 * rarely two.  When both buckets are full (rare at that load: about one
 * insert in 10,000 when the table holds max_entries), or the table
 * holds max_entries, the
 * writer evicts the least recently seen of the candidates: the six
 * slots of the two buckets, or 64 slots sampled from a rotating cursor
 * (a sampled LRU: Open vSwitch keeps an exact LRU list, which readers
 * here would have to update).
 *
 * Reading without locks.  Each bucket is a sequence lock: the writer
 * makes the counter odd, changes slots, makes it even again; a reader
 * reads the counter, the slots, the counter again, and retries if it
 * changed or was odd.  So a reader never pairs one address with another's
 * port.  A table is replaced (set_max) by publishing a new one under RCU
 * and freeing the old after a grace period.
 *
 * Worked example.  Aging 300 s, an empty table, clock at 10 s.  A frame
 * from 50:54:00:00:00:01 on port 1, VLAN 0, at 10 s: the pmd's
 * fdp__fdb_learn() finds nothing and queues {key 0x8000505400000001,
 * port 1}; the thread's next pass, fdp__fdb_run(10), puts it in its
 * first bucket with last seen 10.  A reply to that address looks it up
 * (port 1).  The same address on port 2 at 20 s: learn() finds it on
 * port 1, queues {.., port 2}; run() rewrites the slot's port under the
 * bucket's sequence lock (a move).  No frame from it after 20 s: at the
 * first run at or after 320 s it is removed.
 *
 * Thread-safety: see mac-learning.h.
 */
#include <config.h>

#include "datapath/mac-learning.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/rand.h>

#include "lib/rcu.h"

#define SLOTS 3
#define KEY_VALID (UINT64_C(1) << 63)
#define QUEUE_SIZE 4096         /* Notes: one millisecond of 4 Mpps of
                                 * new sources, far above any real burst
                                 * of new stations; a note lost to a full
                                 * queue is counted, and made again by
                                 * the station's next frame. */
#define EVICT_SAMPLE 64         /* Slots examined to evict when full. */

struct slot {
    uint64_t key;               /* 0: empty.  Atomic. */
    uint32_t port;              /* Atomic. */
    uint32_t used;              /* Last seen, fdb seconds.  Atomic. */
};

struct bucket {
    uint32_t seq;               /* Odd while the writer changes slots. */
    uint32_t overflow;          /* Keys whose first bucket this is that
                                 * live in their second.  Atomic. */
    uint64_t pad_;
    struct slot s[SLOTS];
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct slot) == 16, "a slot is 16 bytes");
_Static_assert(sizeof(struct bucket) == 64, "a bucket is one cache line");

struct table {
    uint32_t mask;              /* Buckets - 1. */
    uint64_t seed[2];
    struct rcu_head rcu;
    struct bucket *b;
};

struct cell {
    uint64_t seq;               /* Atomic: the queue's sequence number. */
    uint64_t key;
    uint32_t port;
};

struct fdp__fdb {
    /* What pmds read, on a line of its own: the writer's mutex and
     * counters change every millisecond. */
    struct table *table;        /* RCU; replaced under 'mutex'. */
    uint32_t clock;             /* Atomic: fdb seconds, set by run(). */
    pthread_mutex_t mutex __attribute__((aligned(64)));

    /* Writer state, under 'mutex'. */
    uint32_t max_entries;
    uint32_t aging;
    uint32_t n_entries;
    uint32_t cursor;            /* Where the next eviction sample starts. */
    uint32_t last_aged;         /* The second aging last ran. */
    int64_t warp;               /* Seconds added to the system's clock. */
    uint64_t n_learned, n_moved, n_expired, n_evicted;

    /* The queue of notes from the pmds. */
    uint64_t head;              /* Atomic: next position to fill. */
    uint64_t tail;              /* Next position to apply (writer). */
    uint64_t n_notes_dropped;   /* Atomic. */
    struct cell cells[QUEUE_SIZE];

    /* The thread. */
    pthread_t thread;
    bool has_thread;
    bool stop;                  /* Atomic. */
    struct timespec start;
};

/* ---------------------------------------------------------------------- */
/* Keys, hashes and the clock.                                            */

static inline uint64_t
make_key(uint64_t mac, uint16_t vlan)
{
    return KEY_VALID | ((uint64_t) (vlan & 0xfff) << 48)
           | (mac & UINT64_C(0xffffffffffff));
}

/* A keyed 64-bit mix (two multiply-xorshift rounds of the key xored with
 * the table's random seed); not a cryptographic hash, but without the
 * seed nobody can aim MACs at one bucket, and a bucket full of them only
 * costs evictions among themselves. */
static inline uint32_t
bucket_of(const struct table *t, uint64_t key, int which)
{
    uint64_t x = key ^ t->seed[which];

    x *= UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 29;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 32;
    return (uint32_t) x & t->mask;
}

static uint32_t
system_seconds(const struct fdp__fdb *fdb)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    /* Starts at 1 so that 0 never reads as "seen now". */
    return (uint32_t) (ts.tv_sec - fdb->start.tv_sec + 1 + fdb->warp);
}

uint32_t
fdp__fdb_now(const struct fdp__fdb *fdb)
{
    return __atomic_load_n(&fdb->clock, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* Tables.                                                                 */

static uint32_t
buckets_for(uint32_t max_entries)
{
    /* Four slots per entry allowed: at most a quarter full, so that a
     * key's first bucket has room nearly always (at a quarter, a bucket
     * gets 0.75 first-choice keys on average and 3 or more, an overflow,
     * about 4 % of the time; both of a key's buckets full, an eviction
     * before the table is full, about once per 10,000 inserts). */
    uint64_t want = ((uint64_t) max_entries * 4 + SLOTS - 1) / SLOTS;
    uint32_t n = 1;

    while (n < want) {
        n <<= 1;
    }
    return n;
}

static struct table *
table_create(uint32_t max_entries)
{
    struct table *t = calloc(1, sizeof *t);
    uint32_t n = buckets_for(max_entries);

    if (!t) {
        return NULL;
    }
    t->b = aligned_alloc(64, (size_t) n * sizeof *t->b);
    if (!t->b) {
        free(t);
        return NULL;
    }
    memset(t->b, 0, (size_t) n * sizeof *t->b);
    t->mask = n - 1;
    if (RAND_bytes((unsigned char *) t->seed, sizeof t->seed) != 1) {
        /* No random bytes: a fixed seed still spreads honest MACs. */
        t->seed[0] = UINT64_C(0x243f6a8885a308d3);
        t->seed[1] = UINT64_C(0x13198a2e03707344);
    }
    return t;
}

static void
table_free(struct table *t)
{
    if (t) {
        free(t->b);
        free(t);
    }
}

static void
table_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    table_free((struct table *) ((char *) head
                                 - offsetof(struct table, rcu)));
}

/* Reader: looks 'key' up in bucket 'b' under its sequence lock.  Returns
 * the slot's index and its port in '*port', or -1; '*overflow' gets the
 * bucket's overflow count (read in the same section). */
static int
bucket_find(const struct bucket *b, uint64_t key, uint32_t *port,
            uint32_t *overflow)
{
    for (;;) {
        uint32_t s1 = __atomic_load_n(&b->seq, __ATOMIC_ACQUIRE);
        int found = -1;
        uint32_t p = 0;

        if (s1 & 1) {
            __builtin_ia32_pause();
            continue;
        }
        for (int i = 0; i < SLOTS; i++) {
            if (__atomic_load_n(&b->s[i].key, __ATOMIC_ACQUIRE) == key) {
                p = __atomic_load_n(&b->s[i].port, __ATOMIC_ACQUIRE);
                found = i;
                break;
            }
        }
        uint32_t o = __atomic_load_n(&b->overflow, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&b->seq, __ATOMIC_RELAXED) == s1) {
            *port = p;
            *overflow = o;
            return found;
        }
    }
}

/* Reader: the slot of 'key' in 't' and its port, or NULL.  The second
 * bucket is read only if the first says some of its keys overflowed
 * there ("Layout"), so most lookups read one line. */
static struct slot *
table_find(const struct table *t, uint64_t key, uint32_t *port)
{
    struct bucket *b1 = &t->b[bucket_of(t, key, 0)];
    uint32_t overflow;
    int i = bucket_find(b1, key, port, &overflow);

    if (i >= 0) {
        return &b1->s[i];
    }
    if (overflow) {
        struct bucket *b2 = &t->b[bucket_of(t, key, 1)];
        uint32_t unused;
        i = bucket_find(b2, key, port, &unused);
        if (i >= 0) {
            return &b2->s[i];
        }
    }
    return NULL;
}

/* Writer: the sequence lock around a change of bucket 'b'.  The data
 * stores inside are release stores and the reader's data loads acquire
 * loads (Boehm's seqlock without fences): a reader that sees a value
 * stored after write_begin() then sees the odd sequence number.  On x86
 * these are plain moves, and ThreadSanitizer understands them, which it
 * does not do for fences. */
static void
write_begin(struct bucket *b)
{
    __atomic_store_n(&b->seq, b->seq + 1, __ATOMIC_RELAXED);
}

static void
write_end(struct bucket *b)
{
    __atomic_store_n(&b->seq, b->seq + 1, __ATOMIC_RELEASE);
}

static struct bucket *
bucket_of_slot(const struct table *t, const struct slot *s)
{
    size_t i = (size_t) ((const char *) s - (const char *) t->b)
               / sizeof *t->b;
    return &t->b[i];
}

static void
slot_write(struct table *t, struct slot *s, uint64_t key, uint32_t port,
           uint32_t used)
{
    struct bucket *b = bucket_of_slot(t, s);

    write_begin(b);
    __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
    __atomic_store_n(&s->port, port, __ATOMIC_RELEASE);
    __atomic_store_n(&s->used, used, __ATOMIC_RELEASE);
    write_end(b);
}

static uint32_t
slot_used(const struct slot *s)
{
    return __atomic_load_n(&s->used, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* Creation and destruction.                                               */

static bool
size_valid(uint32_t max_entries)
{
    return max_entries >= FDP__FDB_SIZE_MIN
           && max_entries <= FDP__FDB_SIZE_MAX;
}

static bool
aging_valid(uint32_t aging)
{
    return aging >= FDP__FDB_AGING_MIN && aging <= FDP__FDB_AGING_MAX;
}

int
fdp__fdb_create(uint32_t max_entries, uint32_t aging, struct fdp__fdb **fdbp)
{
    *fdbp = NULL;
    if (!size_valid(max_entries) || !aging_valid(aging)) {
        return EINVAL;
    }
    struct fdp__fdb *fdb = aligned_alloc(64, sizeof *fdb);
    if (!fdb) {
        return ENOMEM;
    }
    memset(fdb, 0, sizeof *fdb);
    fdb->table = table_create(max_entries);
    if (!fdb->table) {
        free(fdb);
        return ENOMEM;
    }
    pthread_mutex_init(&fdb->mutex, NULL);
    fdb->max_entries = max_entries;
    fdb->aging = aging;
    for (uint64_t i = 0; i < QUEUE_SIZE; i++) {
        fdb->cells[i].seq = i;
    }
    clock_gettime(CLOCK_MONOTONIC_COARSE, &fdb->start);
    fdb->clock = system_seconds(fdb);
    *fdbp = fdb;
    return 0;
}

void
fdp__fdb_destroy(struct fdp__fdb *fdb)
{
    if (!fdb) {
        return;
    }
    if (fdb->has_thread) {
        __atomic_store_n(&fdb->stop, true, __ATOMIC_RELEASE);
        pthread_join(fdb->thread, NULL);
    }
    table_free(fdb->table);
    pthread_mutex_destroy(&fdb->mutex);
    free(fdb);
}

static size_t run_locked(struct fdp__fdb *, uint32_t now);

static void *
fdb_thread(void *fdb_)
{
    struct fdp__fdb *fdb = fdb_;
    /* One millisecond after a pass that applied notes: a station's first
     * frames are flooded for about that long (Open vSwitch's upcall path
     * takes time too).  An idle datapath is not woken a thousand times a
     * second for nothing: the pause doubles with every pass that found
     * nothing to do, up to 64 ms, the longest a new station's frames are
     * flooded after a quiet spell (and well within the second that aging
     * counts in). */
    long pause_ns = 1000000;

    fdp__rcu_register();
    while (!__atomic_load_n(&fdb->stop, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&fdb->mutex);
        size_t n = run_locked(fdb, system_seconds(fdb));
        pthread_mutex_unlock(&fdb->mutex);
        pause_ns = n ? 1000000 : pause_ns < 64000000 ? pause_ns * 2
                                                     : 64000000;
        struct timespec pause = { .tv_nsec = pause_ns };
        nanosleep(&pause, NULL);
    }
    return NULL;
}

int
fdp__fdb_start(struct fdp__fdb *fdb)
{
    if (pthread_create(&fdb->thread, NULL, fdb_thread, fdb)) {
        return EAGAIN;
    }
    fdb->has_thread = true;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Lookups.                                                                */

void
fdp__fdb_prefetch(const struct fdp__fdb *fdb, uint64_t mac, uint16_t vlan)
{
    const struct table *t = FDP_RCU_GET(fdb->table);

    __builtin_prefetch(&t->b[bucket_of(t, make_key(mac, vlan), 0)]);
}

bool
fdp__fdb_lookup(const struct fdp__fdb *fdb, uint64_t mac, uint16_t vlan,
                uint32_t *port)
{
    const struct table *t = FDP_RCU_GET(fdb->table);

    return table_find(t, make_key(mac, vlan), port) != NULL;
}

bool
fdp__fdb_learn(struct fdp__fdb *fdb, uint64_t mac, uint16_t vlan,
               uint32_t port, uint32_t now)
{
    const struct table *t = FDP_RCU_GET(fdb->table);
    uint64_t key = make_key(mac, vlan);
    uint32_t known;
    struct slot *s = table_find(t, key, &known);

    if (s && known == port) {
        /* The one store a pmd makes (see "Who writes"). */
        if (slot_used(s) != now) {
            __atomic_store_n(&s->used, now, __ATOMIC_RELAXED);
        }
        return true;
    }

    /* Vyukov's enqueue: claim position 'pos' if its cell is free. */
    uint64_t pos = __atomic_load_n(&fdb->head, __ATOMIC_RELAXED);
    struct cell *c;
    for (;;) {
        c = &fdb->cells[pos & (QUEUE_SIZE - 1)];
        uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
        int64_t dif = (int64_t) (seq - pos);
        if (dif == 0) {
            if (__atomic_compare_exchange_n(&fdb->head, &pos, pos + 1, true,
                                            __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                break;
            }
        } else if (dif < 0) {
            __atomic_fetch_add(&fdb->n_notes_dropped, 1, __ATOMIC_RELAXED);
            return false;
        } else {
            pos = __atomic_load_n(&fdb->head, __ATOMIC_RELAXED);
        }
    }
    c->key = key;
    c->port = port;
    __atomic_store_n(&c->seq, pos + 1, __ATOMIC_RELEASE);
    return false;
}

/* ---------------------------------------------------------------------- */
/* The writer.                                                             */

/* Empties slot 's'; if its key lived in its second bucket, the first
 * bucket's overflow count goes down. */
static void
slot_clear(struct table *t, struct slot *s)
{
    struct bucket *home = &t->b[bucket_of(t, s->key, 0)];

    if (home != bucket_of_slot(t, s)) {
        write_begin(home);
        __atomic_store_n(&home->overflow, home->overflow - 1,
                         __ATOMIC_RELEASE);
        write_end(home);
    }
    slot_write(t, s, 0, 0, 0);
}

/* The least recently seen of EVICT_SAMPLE slots from the cursor on. */
static struct slot *
sample_victim(struct fdp__fdb *fdb, struct table *t)
{
    size_t n_slots = ((size_t) t->mask + 1) * SLOTS;
    struct slot *victim = NULL;

    /* The table is a quarter full when it holds max_entries, so a sample
     * of 64 finds entries; the loop goes on until it has one. */
    for (size_t k = 0; k < n_slots && (k < EVICT_SAMPLE || !victim); k++) {
        size_t i = (fdb->cursor + k) % n_slots;
        struct slot *s = &t->b[i / SLOTS].s[i % SLOTS];
        if (s->key && (!victim || slot_used(s) < slot_used(victim))) {
            victim = s;
        }
    }
    fdb->cursor = (uint32_t) ((fdb->cursor + EVICT_SAMPLE) % n_slots);
    return victim;
}

/* A free slot of bucket 'b', or NULL. */
static struct slot *
free_slot(struct bucket *b)
{
    for (int i = 0; i < SLOTS; i++) {
        if (!b->s[i].key) {
            return &b->s[i];
        }
    }
    return NULL;
}

/* Inserts 'key' (not in 't') on 'port', seen at 'now': in its first
 * bucket if it has room, else in its second (counted in the first's
 * overflow), else in place of the least recently seen of both. */
static void
table_insert(struct fdp__fdb *fdb, struct table *t, uint64_t key,
             uint32_t port, uint32_t now)
{
    if (fdb->n_entries >= fdb->max_entries) {
        struct slot *v = sample_victim(fdb, t);
        if (v) {
            slot_clear(t, v);
            fdb->n_entries--;
            fdb->n_evicted++;
        }
    }

    struct bucket *b1 = &t->b[bucket_of(t, key, 0)];
    struct bucket *b2 = &t->b[bucket_of(t, key, 1)];
    struct slot *s = free_slot(b1);
    if (!s && b2 != b1) {
        s = free_slot(b2);
    }
    if (!s) {
        /* Both full: the least recently seen of their slots goes. */
        for (int w = 0; w < 2; w++) {
            struct bucket *b = w ? b2 : b1;
            for (int i = 0; i < SLOTS; i++) {
                if (!s || slot_used(&b->s[i]) < slot_used(s)) {
                    s = &b->s[i];
                }
            }
        }
        slot_clear(t, s);
        fdb->n_entries--;
        fdb->n_evicted++;
    }
    if (bucket_of_slot(t, s) != b1) {
        write_begin(b1);
        __atomic_store_n(&b1->overflow, b1->overflow + 1, __ATOMIC_RELEASE);
        write_end(b1);
    }
    slot_write(t, s, key, port, now);
    fdb->n_entries++;
}

/* Applies the queued notes. */
static size_t
apply_notes(struct fdp__fdb *fdb, struct table *t, uint32_t now)
{
    size_t n = 0;

    for (;;) {
        struct cell *c = &fdb->cells[fdb->tail & (QUEUE_SIZE - 1)];
        if (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != fdb->tail + 1) {
            break;
        }
        uint64_t key = c->key;
        uint32_t port = c->port;
        __atomic_store_n(&c->seq, fdb->tail + QUEUE_SIZE, __ATOMIC_RELEASE);
        fdb->tail++;

        uint32_t known;
        struct slot *s = table_find(t, key, &known);
        if (s && known == port) {
            __atomic_store_n(&s->used, now, __ATOMIC_RELAXED);
            continue;           /* Noted twice before the first applied. */
        }
        if (s) {
            slot_write(t, s, key, port, now);
            fdb->n_moved++;
        } else {
            table_insert(fdb, t, key, port, now);
            fdb->n_learned++;
        }
        n++;
    }
    return n;
}

/* Removes the entries not seen for the aging time, as Open vSwitch's
 * mac_learning_run() does when an entry's expiry time comes: at 'now' >=
 * last seen + aging. */
static size_t
expire(struct fdp__fdb *fdb, struct table *t, uint32_t now)
{
    size_t n = 0;

    for (uint32_t i = 0; i <= t->mask; i++) {
        for (int j = 0; j < SLOTS; j++) {
            struct slot *s = &t->b[i].s[j];
            if (s->key && now >= slot_used(s) + (uint64_t) fdb->aging) {
                slot_clear(t, s);
                fdb->n_entries--;
                fdb->n_expired++;
                n++;
            }
        }
    }
    return n;
}

/* fdp__fdb_run() with the mutex held. */
static size_t
run_locked(struct fdp__fdb *fdb, uint32_t now)
{
    struct table *t = fdb->table;
    size_t n;

    if (__atomic_load_n(&fdb->clock, __ATOMIC_RELAXED) != now) {
        __atomic_store_n(&fdb->clock, now, __ATOMIC_RELAXED);
    }
    n = apply_notes(fdb, t, now);
    if (now != fdb->last_aged) {
        n += expire(fdb, t, now);
        fdb->last_aged = now;
    }
    return n;
}

size_t
fdp__fdb_run(struct fdp__fdb *fdb, uint32_t now)
{
    pthread_mutex_lock(&fdb->mutex);
    size_t n = run_locked(fdb, now);
    pthread_mutex_unlock(&fdb->mutex);
    return n;
}

void
fdp__fdb_sync(struct fdp__fdb *fdb)
{
    pthread_mutex_lock(&fdb->mutex);
    run_locked(fdb, system_seconds(fdb));
    pthread_mutex_unlock(&fdb->mutex);
}

void
fdp__fdb_flush(struct fdp__fdb *fdb, uint32_t port)
{
    pthread_mutex_lock(&fdb->mutex);
    struct table *t = fdb->table;
    for (uint32_t i = 0; i <= t->mask; i++) {
        for (int j = 0; j < SLOTS; j++) {
            struct slot *s = &t->b[i].s[j];
            if (s->key && (!port || s->port == port)) {
                slot_clear(t, s);
                fdb->n_entries--;
            }
        }
    }
    pthread_mutex_unlock(&fdb->mutex);
}

/* The entries of 't', least recently seen first (ties by VLAN and MAC,
 * so that a dump is the same every time). */
static int
entry_cmp(const void *a_, const void *b_)
{
    const struct slot *a = a_, *b = b_;

    if (a->used != b->used) {
        return a->used < b->used ? -1 : 1;
    }
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Copies the entries of 't' into a new array, sorted by entry_cmp();
 * returns it (NULL if out of memory or empty) and its length. */
static struct slot *
table_entries(const struct table *t, size_t *np)
{
    size_t n = 0, cap = 0;
    struct slot *v = NULL;

    for (uint32_t i = 0; i <= t->mask; i++) {
        for (int j = 0; j < SLOTS; j++) {
            const struct slot *s = &t->b[i].s[j];
            if (!s->key) {
                continue;
            }
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                struct slot *nv = realloc(v, c * sizeof *nv);
                if (!nv) {
                    free(v);
                    *np = 0;
                    return NULL;
                }
                v = nv;
                cap = c;
            }
            v[n] = (struct slot) { .key = s->key, .port = s->port,
                                   .used = slot_used(s) };
            n++;
        }
    }
    if (n) {
        qsort(v, n, sizeof *v, entry_cmp);
    }
    *np = n;
    return v;
}

int
fdp__fdb_set_max(struct fdp__fdb *fdb, uint32_t max_entries)
{
    if (!size_valid(max_entries)) {
        return EINVAL;
    }
    pthread_mutex_lock(&fdb->mutex);
    struct table *old = fdb->table;
    struct table *t = table_create(max_entries);
    size_t n;
    struct slot *v = table_entries(old, &n);
    if (!t || (n && !v)) {
        pthread_mutex_unlock(&fdb->mutex);
        table_free(t);
        free(v);
        return ENOMEM;
    }
    /* Keep the most recently seen: insert from the end of the list. */
    fdb->max_entries = max_entries;
    fdb->n_entries = 0;
    for (size_t k = n; k-- > 0 && fdb->n_entries < max_entries;) {
        table_insert(fdb, t, v[k].key, v[k].port, v[k].used);
    }
    free(v);
    FDP_RCU_SET(fdb->table, t);
    pthread_mutex_unlock(&fdb->mutex);
    FDP_RCU_TSAN_RELEASE();
    fdp__rcu_defer(&old->rcu, table_free_rcu);
    return 0;
}

int
fdp__fdb_set_aging(struct fdp__fdb *fdb, uint32_t aging)
{
    if (!aging_valid(aging)) {
        return EINVAL;
    }
    pthread_mutex_lock(&fdb->mutex);
    fdb->aging = aging;
    fdb->last_aged = 0;         /* Age by the new rule at the next run. */
    pthread_mutex_unlock(&fdb->mutex);
    return 0;
}

void
fdp__fdb_warp(struct fdp__fdb *fdb, uint32_t seconds)
{
    pthread_mutex_lock(&fdb->mutex);
    fdb->warp += seconds;
    run_locked(fdb, system_seconds(fdb));
    pthread_mutex_unlock(&fdb->mutex);
}

size_t
fdp__fdb_dump(struct fdp__fdb *fdb, struct fdp__fdb_entry *entries,
              size_t max)
{
    size_t n;

    pthread_mutex_lock(&fdb->mutex);
    uint32_t now = fdp__fdb_now(fdb);
    struct slot *v = table_entries(fdb->table, &n);
    pthread_mutex_unlock(&fdb->mutex);
    for (size_t k = 0; k < n && k < max; k++) {
        entries[k] = (struct fdp__fdb_entry) {
            .mac = v[k].key & UINT64_C(0xffffffffffff),
            .vlan = (uint16_t) ((v[k].key >> 48) & 0xfff),
            .port = v[k].port,
            .age = now >= v[k].used ? now - v[k].used : 0,
        };
    }
    free(v);
    return n;
}

void
fdp__fdb_get_stats(struct fdp__fdb *fdb, struct fdp__fdb_stats *st)
{
    pthread_mutex_lock(&fdb->mutex);
    *st = (struct fdp__fdb_stats) {
        .n_entries = fdb->n_entries,
        .max_entries = fdb->max_entries,
        .aging = fdb->aging,
        .n_learned = fdb->n_learned,
        .n_moved = fdb->n_moved,
        .n_expired = fdb->n_expired,
        .n_evicted = fdb->n_evicted,
        .n_notes_dropped = __atomic_load_n(&fdb->n_notes_dropped,
                                           __ATOMIC_RELAXED),
    };
    pthread_mutex_unlock(&fdb->mutex);
}
