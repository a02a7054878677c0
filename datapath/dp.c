/*
 * The datapath: batches of packets from ports, through the table, to
 * ports.
 *
 * What it is for
 * ==============
 * fdp_dp is the fast path an embedding switch runs on its poll-mode
 * threads: receive, classify, execute, transmit, count, with no locks and
 * no allocation per packet.
 *
 * Design
 * ======
 * A pmd polls its ports in turn.  For each port it receives a batch of up
 * to FDP_DP_BATCH (32) packets and runs four phases over the batch:
 *   1. extract: parse each packet into a key (extract.c);
 *   2. classify: probe the pmd's exact-match cache (EMC) with the whole
 *      key, then look the cache misses up in the table with one
 *      fdp_table_lookup_batch() call;
 *   3. account: add each packet to its flow's statistics, one atomic add
 *      per run of packets that hit the same flow;
 *   4. execute: run each flow's actions (execute.c); outputs are queued
 *      per port and transmitted once per batch.
 *
 * The EMC is Open vSwitch's: 8192 entries, two-way set associative,
 * keyed by the full key, each holding the rule a lookup found.  A lookup
 * result enters the cache with probability 1/emc_insert_inv_prob (OVS's
 * default 1/100), so a flood of short flows cannot evict the long ones
 * that make the cache worth having.  An entry is valid only while the
 * table's version (table.h, fdp_table_version()) is the one it was made
 * at: any change to the table, which could change the answer for any key,
 * retires every entry at once without touching the cache.  That is also
 * what keeps the cached rule pointers safe: a rule is freed only after a
 * version change and a grace period, and a pmd uses an entry only if the
 * version it loaded in its current read-side section matches.
 *
 * Buffers (the UMEM).  One area of n_frames frames of frame_size bytes;
 * a free pool (a stack under a mutex) with a per-pmd cache in front of
 * it, so a pmd takes the mutex once per FDP__CACHE_SIZE / 2 frames.  A
 * packet that is output to its last destination travels in its own
 * frame; every earlier output copies it into a new frame (the actions
 * after an output may change the packet, and that output must not see
 * the change).
 *
 * Invariants
 * ==========
 * - Every frame is in exactly one place: the pool, a pmd's cache, a
 *   batch being processed, a port's pending tx queue, or (ring ports) the
 *   peer's hands, which the owner table records.
 * - A port's rx is polled by one pmd only (rank modulo n_pmds); its tx
 *   may be fed by every pmd, under the port's tx mutex.
 *
 * Thread-safety
 * =============
 * Control functions serialise on dp->mutex and publish the port set with
 * RCU; a removed port is closed after a grace period, when no pmd can be
 * transmitting to it.  Pmd counters are written by their pmd only and
 * read with relaxed atomics.
 *
 * Worked example
 * ==============
 * Flow "priority=10,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2" and a
 * batch of 3 packets from port 1 to 10.0.0.2 with TTLs 64, 64 and 1.
 * Extract gives three keys, the first two equal.  Packet 0 misses the
 * EMC and the table finds the flow; say the 1-in-100 draw inserts it.
 * Packet 1 then hits the EMC.  (Both were looked up in the same batch,
 * so in fact both went to the table; the EMC serves the next batch.)
 * Accounting adds 3 packets to the flow in one atomic add.  Executing,
 * packets 0 and 1 get TTL 63 (IPv4 checksum updated) and are queued for
 * port 2 in their own frames; packet 2's dec_ttl fails: dropped, counted
 * in n_ttl_expired and in port 1's rx_dropped.  The tx flush hands port
 * 2 two descriptors.
 *
 * References: B. Pfaff et al., "The Design and Implementation of Open
 * vSwitch", NSDI 2015 (the microflow cache); Open vSwitch's
 * lib/dpif-netdev.c; Linux Documentation/networking/af_xdp.rst.
 */
#include <config.h>

#include "dp-private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "execute.h"
#include "flowdp/cpu.h"
#include "flowdp/hash.h"
#include "flowdp/table.h"
#include "lib/ds.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/tss.h"
#include "lib/util.h"

/* ---------------------------------------------------------------------- */
/* Definitions.                                                            */

#define DEFAULT_N_FRAMES 16384
#define DEFAULT_FRAME_SIZE 2048
#define MIN_FRAME_SIZE 2048     /* Headroom + a full 1518-byte frame. */
#define MAX_FRAME_SIZE 65536
#define MAX_N_FRAMES (1u << 22) /* 4M frames: 8 GiB of 2 KiB frames. */
#define DEFAULT_EMC_INV_PROB 100

/* The exact-match cache: EMC_ENTRIES entries, 2-way set associative. */
#define EMC_SHIFT 13
#define EMC_ENTRIES (1u << EMC_SHIFT)
#define EMC_MASK (EMC_ENTRIES - 1)

struct emc_entry {
    uint32_t hash;
    uint64_t version;           /* Table version the entry is valid at. */
    const struct fdp_rule *rule;    /* NULL: empty. */
    struct fdp_key key;
} __attribute__((aligned(64)));
static_assert(sizeof(struct emc_entry) == 128, "an EMC entry is 2 lines");

/* Most outputs one batch may queue before a flush: 32 packets x 8. */
#define TX_QUEUE_MAX (FDP_DP_BATCH * 8)

struct tx_entry {
    struct fdp__port *port;
    struct fdp_desc desc;
};

/* The pmd's counters (written by the pmd only). */
struct pmd_counters {
    uint64_t n_packets;
    uint64_t n_emc_hits;
    uint64_t n_table_hits;
    uint64_t n_missed;
    uint64_t n_upcalls;
    uint64_t n_ttl_expired;
    uint64_t n_no_room;
};

struct fdp_dp_pmd {
    struct fdp_dp *dp;
    unsigned int id;
    struct fdp_dp_pmd *next;    /* In dp->pmds, under dp->mutex. */
    struct emc_entry *emc;      /* NULL if the cache is off. */
    uint32_t rng;               /* xorshift32 state for EMC insertion. */
    struct fdp__frame_cache cache;
    struct pmd_counters counters;

    /* Per batch. */
    const struct port_set *ports;
    struct fdp__port *in_port;
    struct tx_entry tx[TX_QUEUE_MAX];
    size_t n_tx;
};

/* The published set of ports, sorted by number. */
struct port_set {
    size_t n;
    struct rcu_head rcu;
    struct fdp__port *ports[];
};

struct upcall_handler {
    fdp_dp_upcall_cb *cb;
    void *aux;
    struct rcu_head rcu;
};

struct fdp_dp {
    struct fdp_table *table;
    struct fdp_dp_options options;
    uint32_t emc_basis;

    uint8_t *umem;
    uint64_t umem_size;
    uint32_t *frame_owner;      /* Per frame: ring port holding it, or 0. */
    struct fdp__pool pool;

    struct port_set *ports;     /* RCU. */
    struct upcall_handler *upcall;  /* RCU; NULL if none. */

    pthread_mutex_t mutex;      /* Control: ports, pmds, upcall. */
    uint32_t next_rank;
    struct fdp_dp_pmd *pmds;
    struct pmd_counters retired;    /* Counters of destroyed pmds. */
};

static const struct fdp__port_class *const port_classes[] = {
    &fdp__ring_port_class,
    &fdp__pcap_port_class,
    &fdp__afxdp_port_class,
    &fdp__afpacket_port_class,
};

/* ---------------------------------------------------------------------- */
/* Frames.                                                                 */

uint8_t *
fdp__dp_umem(const struct fdp_dp *dp, uint64_t *size)
{
    if (size) {
        *size = dp->umem_size;
    }
    return dp->umem;
}

uint32_t *
fdp__dp_frame_owner(const struct fdp_dp *dp)
{
    return dp->frame_owner;
}

uint32_t
fdp__dp_frame_size(const struct fdp_dp *dp)
{
    return dp->options.frame_size;
}

struct fdp__pool *
fdp__dp_pool(struct fdp_dp *dp)
{
    return &dp->pool;
}

void
fdp__cache_init(struct fdp__frame_cache *c, struct fdp__pool *pool)
{
    c->pool = pool;
    c->n = 0;
}

uint64_t
fdp__cache_get(struct fdp__frame_cache *c)
{
    if (FDP_UNLIKELY(!c->n)) {
        struct fdp__pool *pool = c->pool;
        pthread_mutex_lock(&pool->mutex);
        uint32_t n = pool->n < FDP__CACHE_SIZE / 2 ? pool->n
                                                   : FDP__CACHE_SIZE / 2;
        pool->n -= n;
        memcpy(c->frames, &pool->frames[pool->n], n * sizeof *c->frames);
        pthread_mutex_unlock(&pool->mutex);
        c->n = n;
        if (!n) {
            return UINT64_MAX;
        }
    }
    return c->frames[--c->n];
}

/* Gives 'n' frames from the top of the cache back to the pool. */
static void
cache_spill(struct fdp__frame_cache *c, uint32_t n)
{
    struct fdp__pool *pool = c->pool;

    pthread_mutex_lock(&pool->mutex);
    c->n -= n;
    memcpy(&pool->frames[pool->n], &c->frames[c->n], n * sizeof *c->frames);
    pool->n += n;
    pthread_mutex_unlock(&pool->mutex);
}

void
fdp__cache_put(struct fdp__frame_cache *c, uint64_t addr)
{
    /* Frame sizes are powers of two: the frame starts at the offset with
     * the low bits cleared.  The pool knows the frame size through the
     * datapath that embeds it. */
    struct fdp_dp *dp = CONTAINER_OF(c->pool, struct fdp_dp, pool);

    if (FDP_UNLIKELY(c->n == FDP__CACHE_SIZE)) {
        cache_spill(c, FDP__CACHE_SIZE / 2);
    }
    c->frames[c->n++] = addr & ~(uint64_t) (dp->options.frame_size - 1);
}

void
fdp__cache_flush(struct fdp__frame_cache *c)
{
    if (c->n) {
        cache_spill(c, c->n);
    }
}

/* ---------------------------------------------------------------------- */
/* Creation and destruction.                                               */

void
fdp_dp_options_init(struct fdp_dp_options *o)
{
    memset(o, 0, sizeof *o);
    o->n_frames = DEFAULT_N_FRAMES;
    o->frame_size = DEFAULT_FRAME_SIZE;
    o->emc_insert_inv_prob = DEFAULT_EMC_INV_PROB;
    o->n_pmds = 1;
}

static bool
options_valid(const struct fdp_dp_options *o)
{
    return o->n_frames >= 2 * FDP__CACHE_SIZE && o->n_frames <= MAX_N_FRAMES
           && o->frame_size >= MIN_FRAME_SIZE
           && o->frame_size <= MAX_FRAME_SIZE
           && !(o->frame_size & (o->frame_size - 1))
           && o->n_pmds >= 1 && o->n_pmds <= 1024;
}

int
fdp_dp_create(struct fdp_table *table, const struct fdp_dp_options *options,
              struct fdp_dp **dpp)
{
    struct fdp_dp *dp;
    int error;

    *dpp = NULL;
    if (!table) {
        return EINVAL;
    }
    /* A FLOWDP_CPU the machine cannot honour is refused here rather than
     * silently running generic code (see flowdp/cpu.h). */
    error = fdp_cpu_init();
    if (error) {
        return error;
    }
    dp = calloc(1, sizeof *dp);
    if (!dp) {
        return ENOMEM;
    }
    if (options) {
        dp->options = *options;
    } else {
        fdp_dp_options_init(&dp->options);
    }
    if (!options_valid(&dp->options)) {
        free(dp);
        return EINVAL;
    }
    error = fdp_hash_random_basis(&dp->emc_basis);
    if (error) {
        free(dp);
        return error;
    }
    dp->table = table;
    dp->umem_size = (uint64_t) dp->options.n_frames * dp->options.frame_size;
    dp->umem = aligned_alloc(4096, dp->umem_size);
    dp->frame_owner = calloc(dp->options.n_frames, sizeof *dp->frame_owner);
    dp->pool.frames = malloc(dp->options.n_frames * sizeof *dp->pool.frames);
    dp->ports = calloc(1, sizeof *dp->ports);
    if (!dp->umem || !dp->frame_owner || !dp->pool.frames || !dp->ports) {
        free(dp->umem);
        free(dp->frame_owner);
        free(dp->pool.frames);
        free(dp->ports);
        free(dp);
        return ENOMEM;
    }
    /* Lowest frames on top of the stack: a light load touches few pages. */
    for (uint32_t i = 0; i < dp->options.n_frames; i++) {
        dp->pool.frames[i] = (uint64_t) (dp->options.n_frames - 1 - i)
                             * dp->options.frame_size;
    }
    dp->pool.n = dp->options.n_frames;
    pthread_mutex_init(&dp->pool.mutex, NULL);
    pthread_mutex_init(&dp->mutex, NULL);
    *dpp = dp;
    return 0;
}

static void port_close(struct fdp__port *);

void
fdp_dp_destroy(struct fdp_dp *dp)
{
    if (!dp) {
        return;
    }
    /* No pmd is polling: nothing to wait for. */
    for (size_t i = 0; i < dp->ports->n; i++) {
        port_close(dp->ports->ports[i]);
    }
    while (dp->pmds) {
        fdp_dp_pmd_destroy(dp->pmds);
    }
    fdp__rcu_barrier();         /* Deferred frees of old port sets. */
    free(dp->ports);
    free(dp->upcall);
    pthread_mutex_destroy(&dp->pool.mutex);
    pthread_mutex_destroy(&dp->mutex);
    free(dp->pool.frames);
    free(dp->frame_owner);
    free(dp->umem);
    free(dp);
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

static void
port_close(struct fdp__port *port)
{
    free(port->spec);
    pthread_mutex_destroy(&port->tx_mutex);
    pthread_mutex_destroy(&port->error_mutex);
    port->class->close(port);
}

static void
free_port_set(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct port_set, rcu));
}

/* Replaces the published port set by 'new' (the old one is freed after a
 * grace period).  Under dp->mutex. */
static void
publish_ports(struct fdp_dp *dp, struct port_set *new)
{
    struct port_set *old = dp->ports;

    FDP_RCU_SET(dp->ports, new);
    fdp__rcu_defer(&old->rcu, free_port_set);
}

/* The port numbered 'port_no' in 'set', or NULL. */
static struct fdp__port *
find_port(const struct port_set *set, uint32_t port_no)
{
    size_t lo = 0, hi = set->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t no = set->ports[mid]->port_no;
        if (no == port_no) {
            return set->ports[mid];
        } else if (no < port_no) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

static int
open_port(struct fdp_dp *dp, const char *spec, struct fdp__port **portp,
          char **errorp)
{
    const char *colon = strchr(spec, ':');
    size_t type_len = colon ? (size_t) (colon - spec) : strlen(spec);

    for (size_t i = 0; i < FDP_ARRAY_SIZE(port_classes); i++) {
        const struct fdp__port_class *class = port_classes[i];
        if (strlen(class->type) == type_len
            && !strncmp(spec, class->type, type_len)) {
            struct fdp__port *port = NULL;
            int error = class->open(dp, colon ? colon + 1 : NULL, &port,
                                    errorp);
            if (!error) {
                port->class = class;
            }
            *portp = port;
            return error;
        }
    }
    *errorp = fdp__xasprintf("\"%.*s\" is not a port type (ring, pcap, "
                             "afxdp, afpacket)",
                             (int) type_len, spec);
    return EINVAL;
}

int
fdp_dp_port_add(struct fdp_dp *dp, uint32_t port_no, const char *spec,
                char **errorp)
{
    struct fdp__port *port = NULL;
    char *error_msg = NULL;
    int error = 0;

    if (port_no == 0 || port_no >= FDP_PORT_MAX) {
        error_msg = fdp__xasprintf("port %" PRIu32 ": port numbers are 1 "
                                   "to %d", port_no, FDP_PORT_MAX - 1);
        error = EINVAL;
        goto out;
    }
    pthread_mutex_lock(&dp->mutex);
    if (find_port(dp->ports, port_no)) {
        error_msg = fdp__xasprintf("port %" PRIu32 " exists", port_no);
        error = EEXIST;
    } else {
        error = open_port(dp, spec, &port, &error_msg);
    }
    struct port_set *old = dp->ports, *new = NULL;
    if (!error) {
        new = malloc(sizeof *new + (old->n + 1) * sizeof *new->ports);
        port->spec = strdup(spec);
        if (!new || !port->spec) {
            error = ENOMEM;
        }
    }
    if (error) {
        if (port) {
            port->class->close(port);
        }
        free(new);
        pthread_mutex_unlock(&dp->mutex);
        goto out;
    }
    port->dp = dp;
    port->port_no = port_no;
    port->rank = dp->next_rank++;
    pthread_mutex_init(&port->tx_mutex, NULL);
    pthread_mutex_init(&port->error_mutex, NULL);
    if (port->class->recycle) {
        /* No pmd sees the port yet: this thread may play the pmd. */
        struct fdp__frame_cache cache;
        fdp__cache_init(&cache, &dp->pool);
        port->class->recycle(port, &cache);
        fdp__cache_flush(&cache);
    }

    size_t k = 0;
    new->n = old->n + 1;
    for (size_t i = 0; i < old->n; i++) {
        if (k == i && old->ports[i]->port_no > port_no) {
            new->ports[k++] = port;
        }
        new->ports[k++] = old->ports[i];
    }
    if (k < new->n) {
        new->ports[k] = port;
    }
    publish_ports(dp, new);
    pthread_mutex_unlock(&dp->mutex);

out:
    if (error && errorp) {
        *errorp = error_msg ? error_msg
                            : fdp__xasprintf("port %" PRIu32 ": %s",
                                             port_no, strerror(error));
    } else {
        free(error_msg);
    }
    return error;
}

int
fdp_dp_port_del(struct fdp_dp *dp, uint32_t port_no)
{
    pthread_mutex_lock(&dp->mutex);
    struct port_set *old = dp->ports;
    struct fdp__port *port = find_port(old, port_no);
    if (!port) {
        pthread_mutex_unlock(&dp->mutex);
        return ENOENT;
    }
    struct port_set *new = malloc(sizeof *new + old->n * sizeof *new->ports);
    if (!new) {
        pthread_mutex_unlock(&dp->mutex);
        return ENOMEM;
    }
    new->n = 0;
    for (size_t i = 0; i < old->n; i++) {
        if (old->ports[i] != port) {
            new->ports[new->n++] = old->ports[i];
        }
    }
    publish_ports(dp, new);
    /* Wait until no pmd can still be receiving from or sending to it. */
    fdp__rcu_synchronize();
    port_close(port);
    pthread_mutex_unlock(&dp->mutex);
    return 0;
}

size_t
fdp_dp_port_list(struct fdp_dp *dp, uint32_t *port_nos, size_t max)
{
    pthread_mutex_lock(&dp->mutex);
    size_t n = dp->ports->n;
    for (size_t i = 0; i < n && i < max; i++) {
        port_nos[i] = dp->ports->ports[i]->port_no;
    }
    pthread_mutex_unlock(&dp->mutex);
    return n;
}

int
fdp_dp_port_get_stats(struct fdp_dp *dp, uint32_t port_no,
                      struct fdp_port_stats *stats, const char **specp)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port) {
        const struct fdp_port_stats *s = &port->stats;
        stats->rx_packets = fdp__read_count(&s->rx_packets);
        stats->rx_bytes = fdp__read_count(&s->rx_bytes);
        stats->rx_dropped = fdp__read_count(&s->rx_dropped);
        stats->rx_errors = fdp__read_count(&s->rx_errors);
        stats->tx_packets = fdp__read_count(&s->tx_packets);
        stats->tx_bytes = fdp__read_count(&s->tx_bytes);
        stats->tx_dropped = fdp__read_count(&s->tx_dropped);
        if (specp) {
            *specp = port->spec;
        }
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_get_error(struct fdp_dp *dp, uint32_t port_no, char *buf,
                      size_t size)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port && size) {
        /* The back end writes it on a pmd, under the port's error mutex. */
        pthread_mutex_lock(&port->error_mutex);
        snprintf(buf, size, "%s", port->error);
        pthread_mutex_unlock(&port->error_mutex);
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_describe(struct fdp_dp *dp, uint32_t port_no, char *buf,
                     size_t size)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port && size) {
        buf[0] = '\0';
        if (port->class->describe) {
            port->class->describe(port, buf, size);
        }
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_rings(struct fdp_dp *dp, uint32_t port_no,
                  struct fdp_port_rings *rings)
{
    int error = 0;

    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (!port) {
        error = ENOENT;
    } else if (!port->class->rings) {
        error = EINVAL;
    } else {
        port->class->rings(port, rings);
    }
    pthread_mutex_unlock(&dp->mutex);
    return error;
}

/* ---------------------------------------------------------------------- */
/* Upcalls.                                                                */

static void
free_upcall(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct upcall_handler, rcu));
}

void
fdp_dp_set_upcall(struct fdp_dp *dp, fdp_dp_upcall_cb *cb, void *aux)
{
    struct upcall_handler *h = NULL;

    if (cb) {
        h = malloc(sizeof *h);
        if (!h) {
            return;             /* Out of memory: keep the old handler. */
        }
        h->cb = cb;
        h->aux = aux;
    }
    pthread_mutex_lock(&dp->mutex);
    struct upcall_handler *old = dp->upcall;
    FDP_RCU_SET(dp->upcall, h);
    if (old) {
        fdp__rcu_defer(&old->rcu, free_upcall);
    }
    pthread_mutex_unlock(&dp->mutex);
}

/* ---------------------------------------------------------------------- */
/* Pmds.                                                                   */

int
fdp_dp_pmd_create(struct fdp_dp *dp, unsigned int id,
                  struct fdp_dp_pmd **pmdp)
{
    struct fdp_dp_pmd *pmd;

    *pmdp = NULL;
    if (id >= dp->options.n_pmds) {
        return EINVAL;
    }
    pmd = aligned_alloc(64, (sizeof *pmd + 63) & ~(size_t) 63);
    if (!pmd) {
        return ENOMEM;
    }
    memset(pmd, 0, sizeof *pmd);
    if (dp->options.emc_insert_inv_prob) {
        pmd->emc = aligned_alloc(64, EMC_ENTRIES * sizeof *pmd->emc);
        if (!pmd->emc) {
            free(pmd);
            return ENOMEM;
        }
        memset(pmd->emc, 0, EMC_ENTRIES * sizeof *pmd->emc);
    }
    pmd->dp = dp;
    pmd->id = id;
    pmd->rng = dp->emc_basis | 1;
    fdp__cache_init(&pmd->cache, &dp->pool);

    pthread_mutex_lock(&dp->mutex);
    pmd->next = dp->pmds;
    dp->pmds = pmd;
    pthread_mutex_unlock(&dp->mutex);
    *pmdp = pmd;
    return 0;
}

static void
add_counters(struct pmd_counters *sum, const struct pmd_counters *c)
{
    sum->n_packets += fdp__read_count(&c->n_packets);
    sum->n_emc_hits += fdp__read_count(&c->n_emc_hits);
    sum->n_table_hits += fdp__read_count(&c->n_table_hits);
    sum->n_missed += fdp__read_count(&c->n_missed);
    sum->n_upcalls += fdp__read_count(&c->n_upcalls);
    sum->n_ttl_expired += fdp__read_count(&c->n_ttl_expired);
    sum->n_no_room += fdp__read_count(&c->n_no_room);
}

void
fdp_dp_pmd_destroy(struct fdp_dp_pmd *pmd)
{
    if (!pmd) {
        return;
    }
    struct fdp_dp *dp = pmd->dp;
    pthread_mutex_lock(&dp->mutex);
    for (struct fdp_dp_pmd **p = &dp->pmds; *p; p = &(*p)->next) {
        if (*p == pmd) {
            *p = pmd->next;
            break;
        }
    }
    add_counters(&dp->retired, &pmd->counters);
    pthread_mutex_unlock(&dp->mutex);
    fdp__cache_flush(&pmd->cache);
    free(pmd->emc);
    free(pmd);
}

void
fdp_dp_get_stats(struct fdp_dp *dp, struct fdp_dp_stats *stats)
{
    struct pmd_counters sum;

    pthread_mutex_lock(&dp->mutex);
    sum = dp->retired;
    for (struct fdp_dp_pmd *pmd = dp->pmds; pmd; pmd = pmd->next) {
        add_counters(&sum, &pmd->counters);
    }
    pthread_mutex_unlock(&dp->mutex);
    pthread_mutex_lock(&dp->pool.mutex);
    stats->n_frames_free = dp->pool.n;
    pthread_mutex_unlock(&dp->pool.mutex);
    stats->n_packets = sum.n_packets;
    stats->n_emc_hits = sum.n_emc_hits;
    stats->n_table_hits = sum.n_table_hits;
    stats->n_missed = sum.n_missed;
    stats->n_upcalls = sum.n_upcalls;
    stats->n_ttl_expired = sum.n_ttl_expired;
    stats->n_no_room = sum.n_no_room;
}

/* Relaxed increment of a counter only this pmd writes (others read it). */
static void
pmd_count(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------- */
/* The exact-match cache.                                                  */

static uint32_t
pmd_random(struct fdp_dp_pmd *pmd)
{
    uint32_t x = pmd->rng;      /* xorshift32 (Marsaglia 2003). */

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return pmd->rng = x;
}

static const struct fdp_rule *
emc_lookup(const struct fdp_dp_pmd *pmd, const struct fdp_key *key,
           uint32_t hash, uint64_t version)
{
    const struct emc_entry *e0 = &pmd->emc[hash & EMC_MASK];
    const struct emc_entry *e1 = &pmd->emc[(hash >> EMC_SHIFT) & EMC_MASK];

    if (e0->hash == hash && e0->version == version && e0->rule
        && !memcmp(&e0->key, key, sizeof *key)) {
        return e0->rule;
    }
    if (e1->hash == hash && e1->version == version && e1->rule
        && !memcmp(&e1->key, key, sizeof *key)) {
        return e1->rule;
    }
    return NULL;
}

/* Caches 'rule' for 'key' with probability 1/emc_insert_inv_prob, in the
 * way that is stale or empty, else in the one the hash's top bit picks. */
static void
emc_insert(struct fdp_dp_pmd *pmd, const struct fdp_key *key, uint32_t hash,
           uint64_t version, const struct fdp_rule *rule)
{
    uint32_t inv = pmd->dp->options.emc_insert_inv_prob;

    if (inv > 1 && pmd_random(pmd) % inv) {
        return;
    }
    struct emc_entry *e0 = &pmd->emc[hash & EMC_MASK];
    struct emc_entry *e1 = &pmd->emc[(hash >> EMC_SHIFT) & EMC_MASK];
    struct emc_entry *e = (!e0->rule || e0->version != version) ? e0
                          : (!e1->rule || e1->version != version) ? e1
                          : (hash >> 31) ? e1 : e0;
    e->hash = hash;
    e->version = version;
    e->rule = rule;
    e->key = *key;
}

/* ---------------------------------------------------------------------- */
/* Batch processing.                                                       */

struct batch {
    size_t n;
    struct fdp__pkt pkts[FDP_DP_BATCH];
    const struct fdp_rule *rules[FDP_DP_BATCH];
    bool sent[FDP_DP_BATCH];    /* Went to at least one port. */
};

/* Phase 1: receive and extract. */
static void
batch_extract(struct fdp_dp_pmd *pmd, struct batch *b,
              const struct fdp_desc *descs, size_t n)
{
    struct fdp_dp *dp = pmd->dp;
    struct fdp__port *in = pmd->in_port;
    uint64_t bytes = 0;

    b->n = n;
    for (size_t i = 0; i < n; i++) {
        struct fdp__pkt *p = &b->pkts[i];
        uint32_t offset = (uint32_t) (descs[i].addr
                                      & (dp->options.frame_size - 1));
        p->data = dp->umem + descs[i].addr;
        p->size = descs[i].len;
        p->headroom = offset - FDP__FRAME_META_SIZE;
        fdp_packet_extract(p->data, p->size, in->port_no, &p->key,
                           &p->layout);
        b->sent[i] = false;
        bytes += p->size;
    }
    fdp__count(&in->stats.rx_packets, n);
    fdp__count(&in->stats.rx_bytes, bytes);
    pmd_count(&pmd->counters.n_packets, n);
}

/* Phase 2: exact-match cache, then the table for the rest. */
static void
batch_classify(struct fdp_dp_pmd *pmd, struct batch *b)
{
    struct fdp_dp *dp = pmd->dp;
    const struct fdp_key *miss_keys[FDP_DP_BATCH];
    const struct fdp_rule *miss_rules[FDP_DP_BATCH];
    uint32_t hashes[FDP_DP_BATCH] = { 0 };
    uint8_t miss_idx[FDP_DP_BATCH];
    size_t n_miss = 0, n_emc = 0, n_hit = 0;
    uint64_t version = fdp_table_version(dp->table);

    if (pmd->emc) {
        /* Hash the whole batch first and prefetch both ways of each
         * set, so that the cache misses overlap instead of queueing. */
        for (size_t i = 0; i < b->n; i++) {
            hashes[i] = fdp_hash_fast(b->pkts[i].key.w, FDP_KEY_WORDS,
                                      dp->emc_basis);
            __builtin_prefetch(&pmd->emc[hashes[i] & EMC_MASK]);
            __builtin_prefetch(&pmd->emc[(hashes[i] >> EMC_SHIFT)
                                         & EMC_MASK]);
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        const struct fdp_key *key = &b->pkts[i].key;
        b->rules[i] = pmd->emc ? emc_lookup(pmd, key, hashes[i], version)
                               : NULL;
        if (b->rules[i]) {
            n_emc++;
        } else {
            miss_idx[n_miss] = (uint8_t) i;
            miss_keys[n_miss++] = key;
        }
    }
    if (n_miss) {
        fdp_table_lookup_batch(dp->table, miss_keys, n_miss, miss_rules);
    }
    for (size_t j = 0; j < n_miss; j++) {
        size_t i = miss_idx[j];
        b->rules[i] = miss_rules[j];
        if (miss_rules[j]) {
            n_hit++;
            if (pmd->emc) {
                emc_insert(pmd, &b->pkts[i].key, hashes[i], version,
                           miss_rules[j]);
            }
        }
    }
    pmd_count(&pmd->counters.n_emc_hits, n_emc);
    pmd_count(&pmd->counters.n_table_hits, n_hit);
}

/* Phase 3: flow statistics, one update per run of equal rules. */
static void
batch_account(struct batch *b)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    int64_t now = (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    for (size_t i = 0; i < b->n; ) {
        const struct fdp_rule *rule = b->rules[i];
        uint64_t n_packets = 0, n_bytes = 0;
        size_t j = i;
        for (; j < b->n && b->rules[j] == rule; j++) {
            n_packets++;
            n_bytes += b->pkts[j].size;
        }
        if (rule) {
            fdp__rule_account_n(rule, n_packets, n_bytes, now);
        }
        i = j;
    }
}

/* Transmits the queued outputs, a port at a time. */
static void
pmd_flush_tx(struct fdp_dp_pmd *pmd)
{
    struct fdp_desc descs[TX_QUEUE_MAX];

    for (size_t i = 0; i < pmd->n_tx; i++) {
        struct fdp__port *port = pmd->tx[i].port;
        uint64_t bytes = 0;
        uint32_t n = 0;
        if (!port) {
            continue;
        }
        for (size_t j = i; j < pmd->n_tx; j++) {
            if (pmd->tx[j].port == port) {
                descs[n++] = pmd->tx[j].desc;
                pmd->tx[j].port = NULL;
            }
        }
        pthread_mutex_lock(&port->tx_mutex);
        uint32_t sent = port->class->tx(port, &pmd->cache, descs, n);
        pthread_mutex_unlock(&port->tx_mutex);
        for (uint32_t k = 0; k < sent; k++) {
            bytes += descs[k].len;
        }
        fdp__count(&port->stats.tx_packets, sent);
        fdp__count(&port->stats.tx_bytes, bytes);
        fdp__count(&port->stats.tx_dropped, n - sent);
    }
    pmd->n_tx = 0;
}

struct exec_ctx {
    struct fdp_dp_pmd *pmd;
    struct batch *batch;
    size_t i;
};

static void
exec_output(void *ctx_, struct fdp__pkt *pkt, uint32_t port_no, bool steal)
{
    struct exec_ctx *ctx = ctx_;
    struct fdp_dp_pmd *pmd = ctx->pmd;
    struct fdp_dp *dp = pmd->dp;
    struct fdp__port *port = find_port(pmd->ports, port_no);
    uint64_t addr = (uint64_t) (pkt->data - dp->umem);

    if (!port) {
        if (steal) {
            fdp__cache_put(&pmd->cache, addr);
        }
        return;                 /* No such port: OpenFlow drops. */
    }
    if (!steal) {
        /* Copy into a new frame at the same offset, with metadata. */
        uint64_t frame = fdp__cache_get(&pmd->cache);
        if (frame == UINT64_MAX) {
            fdp__count(&port->stats.tx_dropped, 1);
            return;
        }
        uint32_t offset = (uint32_t) (addr & (dp->options.frame_size - 1));
        uint64_t src = addr - offset;
        memcpy(dp->umem + frame, dp->umem + src, sizeof(struct fdp__frame_meta));
        memcpy(dp->umem + frame + offset, pkt->data, pkt->size);
        addr = frame + offset;
    }
    if (pmd->n_tx == TX_QUEUE_MAX) {
        pmd_flush_tx(pmd);
    }
    pmd->tx[pmd->n_tx++] = (struct tx_entry) {
        .port = port,
        .desc = { .addr = addr, .len = pkt->size },
    };
    ctx->batch->sent[ctx->i] = true;
}

/* Hands 'size' bytes of a packet to the upcall handler, if any; returns
 * whether there was one. */
static bool
do_upcall(struct fdp_dp_pmd *pmd, enum fdp_upcall_reason reason,
          const struct fdp__pkt *pkt, size_t size)
{
    const struct upcall_handler *h = FDP_RCU_GET(pmd->dp->upcall);

    if (!h) {
        return false;
    }
    struct fdp_upcall up = {
        .reason = reason,
        .in_port = pmd->in_port->port_no,
        .data = pkt->data,
        .size = size,
        .key = &pkt->key,
    };
    h->cb(h->aux, &up);
    pmd_count(&pmd->counters.n_upcalls, 1);
    return true;
}

static void
exec_controller(void *ctx_, const struct fdp__pkt *pkt, uint32_t max_len)
{
    struct exec_ctx *ctx = ctx_;

    do_upcall(ctx->pmd, FDP_UPCALL_ACTION, pkt,
              pkt->size < max_len ? pkt->size : max_len);
}

static const struct fdp__exec_ops exec_ops = {
    .output = exec_output,
    .controller = exec_controller,
};

/* Phase 4: actions (or upcall) for each packet; then transmit. */
static void
batch_execute(struct fdp_dp_pmd *pmd, struct batch *b)
{
    struct fdp__port *in = pmd->in_port;
    uint64_t dropped = 0;

    for (size_t i = 0; i < b->n; i++) {
        struct fdp__pkt *pkt = &b->pkts[i];
        enum fdp__exec_result r = FDP__EXEC_DONE;

        if (!b->rules[i]) {
            pmd_count(&pmd->counters.n_missed, 1);
            do_upcall(pmd, FDP_UPCALL_MISS, pkt, pkt->size);
        } else {
            struct exec_ctx ctx = { pmd, b, i };
            r = fdp__execute(fdp__rule_actions(b->rules[i]), pkt,
                             in->port_no, &exec_ops, &ctx);
            if (r == FDP__EXEC_TTL_EXPIRED) {
                pmd_count(&pmd->counters.n_ttl_expired, 1);
            } else if (r == FDP__EXEC_NO_ROOM) {
                pmd_count(&pmd->counters.n_no_room, 1);
            }
        }
        if (r != FDP__EXEC_STOLEN) {
            fdp__cache_put(&pmd->cache, (uint64_t) (pkt->data
                                                    - pmd->dp->umem));
        }
        dropped += !b->sent[i];
    }
    fdp__count(&in->stats.rx_dropped, dropped);
    pmd_flush_tx(pmd);
}

static size_t
pmd_poll_port(struct fdp_dp_pmd *pmd, struct fdp__port *port, bool *eof)
{
    struct fdp_desc descs[FDP_DP_BATCH];
    struct batch b;
    uint32_t n;

    if (port->rx_eof) {
        *eof = true;
        n = 0;
    } else {
        n = port->class->rx(port, &pmd->cache, descs, FDP_DP_BATCH, eof);
        port->rx_eof = *eof;
    }
    if (n) {
        pmd->in_port = port;
        batch_extract(pmd, &b, descs, n);
        batch_classify(pmd, &b);
        batch_account(&b);
        batch_execute(pmd, &b);
    }
    if (port->class->recycle) {
        port->class->recycle(port, &pmd->cache);
    }
    return n;
}

size_t
fdp_dp_pmd_poll(struct fdp_dp_pmd *pmd, bool *exhausted)
{
    struct fdp_dp *dp = pmd->dp;
    bool all_eof = true;
    size_t total = 0;

    fdp__rcu_read_lock();
    pmd->ports = FDP_RCU_GET(dp->ports);
    for (size_t i = 0; i < pmd->ports->n; i++) {
        struct fdp__port *port = pmd->ports->ports[i];
        if (port->rank % dp->options.n_pmds == pmd->id) {
            bool eof = false;
            total += pmd_poll_port(pmd, port, &eof);
            all_eof &= eof;
        }
    }
    pmd->ports = NULL;
    fdp__rcu_read_unlock();
    if (exhausted) {
        *exhausted = all_eof && !total;
    }
    return total;
}
