/*
 * Datapath internals shared by dp.c and the port back ends (port.c).
 */
#ifndef FDP_DP_PRIVATE_H
#define FDP_DP_PRIVATE_H 1

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <flowdp/datapath.h>
#include <flowdp/ring.h>

/* Each frame starts with this metadata; the packet follows at
 * FDP_DP_HEADROOM, and pushed tags may grow into the bytes between. */
struct fdp__frame_meta {
    int64_t ts_usec;            /* Receive time, microseconds since the
                                 * epoch (pcap's clock). */
};
#define FDP__FRAME_META_SIZE 64     /* One cache line, for alignment. */
static_assert(sizeof(struct fdp__frame_meta) <= FDP__FRAME_META_SIZE,
              "frame metadata fits its reserved space");

/* The free frames of a datapath: a stack of frame offsets. */
struct fdp__pool {
    pthread_mutex_t mutex;
    uint64_t *frames;
    uint32_t n;
    uint32_t frame_size;        /* Fixed: a power of two. */
};

/* A thread's private stock of free frames, refilled from and spilled to
 * the pool a half at a time so that the mutex is taken once per many
 * frames. */
#define FDP__CACHE_SIZE 256
struct fdp__frame_cache {
    struct fdp__pool *pool;
    uint64_t frame_mask;        /* ~(frame_size - 1). */
    uint32_t n;
    uint64_t frames[FDP__CACHE_SIZE];
};

void fdp__cache_init(struct fdp__frame_cache *, struct fdp__pool *);
/* Gives every cached frame back to the pool. */
void fdp__cache_flush(struct fdp__frame_cache *);

/* The slow paths of the two below: the pool, under its mutex. */
uint64_t fdp__cache_refill(struct fdp__frame_cache *);
void fdp__cache_spill(struct fdp__frame_cache *, uint32_t n);

/* A free frame's offset, or UINT64_MAX if none is left.  Inline: every
 * packet takes one (a port's fill ring) and gives one back. */
static inline uint64_t
fdp__cache_get(struct fdp__frame_cache *c)
{
    if (__builtin_expect(!c->n, 0)) {
        return fdp__cache_refill(c);
    }
    return c->frames[--c->n];
}

/* Frees the frame holding offset 'addr' (any offset within it). */
static inline void
fdp__cache_put(struct fdp__frame_cache *c, uint64_t addr)
{
    if (__builtin_expect(c->n == FDP__CACHE_SIZE, 0)) {
        fdp__cache_spill(c, FDP__CACHE_SIZE / 2);
    }
    c->frames[c->n++] = addr & c->frame_mask;
}

/* A port: the generic part, embedded in each back end's struct. */
struct fdp__port {
    const struct fdp__port_class *class;
    struct fdp_dp *dp;
    uint32_t port_no;
    uint32_t rank;              /* Order of addition: which pmd polls. */
    char *spec;
    bool rx_eof;                /* Polling pmd only. */
    pthread_mutex_t tx_mutex;   /* Serialises tx from several pmds. */
    struct fdp_port_stats stats;    /* Relaxed atomics. */
    pthread_mutex_t error_mutex;    /* Guards 'error' (rare: errors only). */
    char error[160];            /* The back end's last error, or "". */
    /* NORMAL's view of the port (datapath/normal.h): RCU, NULL for a
     * trunk of every VLAN; replaced under the datapath's mutex. */
    struct fdp__vlan_conf *vlan;
};

/* A back end's option: "key=value" in its spec. */
struct fdp__port_arg {
    const char *key;
    char *value;                /* Owned; NULL if not given. */
};

/* Parses 'args' ("key=value,key=value", or NULL for none) into the
 * 'n_known' options 'known' of port type 'type'.  Returns 0, or EINVAL
 * with '*errorp' naming an option that is not KEY=VALUE, unknown or given
 * twice, or ENOMEM.  The caller frees the values with
 * fdp__port_free_args() either way. */
int fdp__port_parse_args(const char *type, const char *args,
                         struct fdp__port_arg *known, size_t n_known,
                         char **errorp);
void fdp__port_free_args(struct fdp__port_arg *, size_t n);

/* Checks that 'dev' (the dev= option of port type 'type', NULL if not
 * given) names an interface and returns its index through '*ifindex'.
 * Returns 0, or EINVAL or ENODEV with '*errorp' naming the interface and
 * what is wrong.  In port-afpacket.c. */
int fdp__port_ifindex(const char *type, const char *dev,
                      unsigned int *ifindex, char **errorp);

/* Records a back-end error message for fdp_dp_port_get_error(). */
void fdp__port_set_error(struct fdp__port *, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

struct fdp__pkt;
struct fdp__tnl_pmd;

struct fdp__port_class {
    const char *type;

    /* Opens a port from the text after "TYPE:" (NULL if none). */
    int (*open)(struct fdp_dp *, const char *args, struct fdp__port **,
                char **errorp);

    /* Closes the port: no pmd uses it any more; frames it holds go back
     * to the pool. */
    void (*close)(struct fdp__port *);

    /* Receives up to 'n' packets into 'descs' (frames from 'cache' or
     * from the port's own rings); returns how many.  Sets '*eof' if no
     * packet will ever come again.  Polling pmd only. */
    uint32_t (*rx)(struct fdp__port *, struct fdp__frame_cache *,
                   struct fdp_desc *descs, uint32_t n, bool *eof);

    /* Sends 'n' packets, taking every frame; returns how many were sent
     * (the first ones; the rest were dropped and their frames freed to
     * 'cache').  Under tx_mutex, which a datapath with one pmd does
     * not take: its only pmd is then the only caller. */
    uint32_t (*tx)(struct fdp__port *, struct fdp__frame_cache *,
                   const struct fdp_desc *descs, uint32_t n);

    /* Housekeeping after a poll (completed frames back to the pool,
     * fresh ones to the peer).  Polling pmd only; may be NULL. */
    void (*recycle)(struct fdp__port *, struct fdp__frame_cache *);

    /* Ring ports only: the peer's view. */
    void (*rings)(struct fdp__port *, struct fdp_port_rings *);

    /* What the back end set up, in a few words for people (the XDP
     * program and mode an afxdp port got), into 'buf' of 'size' bytes.
     * Control thread, under the datapath's mutex.  May be NULL. */
    void (*describe)(const struct fdp__port *, char *buf, size_t size);

    /* Tunnel ports only (datapath/tunnel.h, fdp__tnl_send()): output to
     * the port encapsulates the packet in place and names the underlay
     * port to send it out of, or drops it (counted).  NULL for a port
     * whose tx sends what is output to it. */
    bool (*encap)(struct fdp__port *, struct fdp__tnl_pmd **,
                  struct fdp__pkt *, uint32_t frame_size, uint32_t hash,
                  uint32_t *out_port);
};

extern const struct fdp__port_class fdp__ring_port_class;
extern const struct fdp__port_class fdp__pcap_port_class;
/* In port-afpacket.c and port-afxdp.c. */
extern const struct fdp__port_class fdp__afpacket_port_class;
extern const struct fdp__port_class fdp__afxdp_port_class;
/* In port-tunnel.c. */
extern const struct fdp__port_class fdp__vxlan_port_class;
extern const struct fdp__port_class fdp__geneve_port_class;
extern const struct fdp__port_class fdp__gre_port_class;

/* A class's 'rx' and 'tx' for a port that never receives (a tunnel port,
 * whose packets arrive on its underlay port; an afxdp port built without
 * libxdp): rx reports end of input, and tx gives every frame back to the
 * cache (a tunnel port's output goes through 'encap', never a transmit
 * queue, so a frame that gets here is dropped). */
uint32_t fdp__port_rx_none(struct fdp__port *, struct fdp__frame_cache *,
                           struct fdp_desc *, uint32_t n, bool *eof);
uint32_t fdp__port_tx_drop(struct fdp__port *, struct fdp__frame_cache *,
                           const struct fdp_desc *, uint32_t n);

/* What the back ends need from the datapath. */
uint8_t *fdp__dp_umem(const struct fdp_dp *, uint64_t *size);
/* Per frame: the number of the ring port whose peer holds it, or 0. */
uint32_t *fdp__dp_frame_owner(const struct fdp_dp *);
uint32_t fdp__dp_frame_size(const struct fdp_dp *);
struct fdp__pool *fdp__dp_pool(struct fdp_dp *);
struct fdp__ct;
/* The datapath's connection tracker (datapath/conntrack.h): never NULL. */
struct fdp__ct *fdp__dp_ct(const struct fdp_dp *);
struct fdp__ipf;
/* The datapath's fragment reassembler (datapath/ipf.h): never NULL. */
struct fdp__ipf *fdp__dp_ipf(const struct fdp_dp *);
struct fdp_pipeline;
/* The datapath's pipeline, or NULL for a bare table (its TLV map places
 * Geneve options: datapath/port-tunnel.c). */
struct fdp_pipeline *fdp__dp_pipeline(const struct fdp_dp *);
struct fdp__ct_pmd_stats;
/* The tracker counters of 'dp''s live pmds, summed under the datapath's
 * mutex (datapath/dp-ct.c's fdp_dp_ct_stats()). */
void fdp__dp_ct_pmd_stats(struct fdp_dp *, struct fdp__ct_pmd_stats *);

/* Tests only: when nonnull, a pmd calls it after loading the snapshot of
 * a batch (a pipeline's, lib/pipeline-view.h, or a bare table's
 * one-table view) and before using it, so that a test can make a writer
 * commit exactly there.  Set it while no pmd
 * polls.  NULL in production (a load and a branch per batch). */
extern void (*fdp__dp_snapshot_hook)(struct fdp_dp *);

/* The datapath's learner (datapath/learner.h), NULL for a bare table:
 * for tests, the benchmark and flowdpd's statistics. */
struct fdp__learner;
struct fdp__learner *fdp__dp_learner(struct fdp_dp *);
/* NORMAL's switch (datapath/normal.c), and its way to the ports: lock the
 * datapath's control mutex, find a port under it (NULL if none), unlock. */
struct fdp__normal *fdp__dp_normal(const struct fdp_dp *);
/* The datapath's underlay (datapath/underlay.c): never NULL. */
struct fdp__underlay;
struct fdp__underlay *fdp__dp_underlay(const struct fdp_dp *);
void fdp__dp_lock(struct fdp_dp *);
struct fdp__port *fdp__dp_port_locked(struct fdp_dp *, uint32_t port_no);
void fdp__dp_unlock(struct fdp_dp *);

/* Relaxed counter updates. */
static inline void
fdp__count(uint64_t *counter, uint64_t n)
{
    __atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static inline uint64_t
fdp__read_count(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

#endif /* FDP_DP_PRIVATE_H */
