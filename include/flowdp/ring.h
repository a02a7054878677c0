/*
 * flowdp: single-producer / single-consumer descriptor rings.
 *
 * Rings are shaped like AF_XDP's (Linux Documentation/networking/af_xdp):
 * a power-of-two array of descriptors and two free-running 32-bit indices,
 * each written by one side only, with a cached copy of the other side's
 * index so that most operations touch no shared cache line.  The producer
 * reserves slots, fills them and submits; the consumer peeks at filled
 * slots, reads them and releases.  Batches amortise the index updates.
 *
 * As with AF_XDP's UMEM, packet buffers are owned by exactly one side at
 * a time: a fill ring hands free buffers to the receiver, an rx ring hands
 * filled buffers to the datapath, and a completion ring gives them back.
 * The descriptor says which buffer ('addr') and how many bytes ('len').
 *
 * Thread-safety: one thread may produce and one thread may consume at the
 * same time; each side's functions must not be called from two threads at
 * once.  create and destroy need no other thread to be using the ring.
 */
#ifndef FLOWDP_RING_H
#define FLOWDP_RING_H 1

#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A descriptor, as AF_XDP's struct xdp_desc. */
struct fdp_desc {
    uint64_t addr;          /* Buffer: offset in the buffer area. */
    uint32_t len;           /* Bytes of packet in it. */
    uint32_t options;       /* Free for the user (port number, flags). */
};

/* A ring.  The layout is in this header, as libxdp's struct xsk_ring_prod
 * is in xsk.h, only so that the burst operations below can be inline: a
 * poll loop makes a handful of them per batch, and an out-of-line call
 * each cost more than the operation.  The members are the ring's own:
 * use the functions.
 *
 * Two free-running 32-bit indices, 'producer' and 'consumer', each
 * written by one side only and each on its own cache line; each side
 * keeps its private head and a cached copy of the other side's index on a
 * line of its own, refreshed only when the cached value says the ring is
 * full (producer) or empty (consumer). */
struct fdp_ring {
    /* Written by the producer only. */
    uint32_t producer __attribute__((aligned(64)));
    /* Written by the consumer only. */
    uint32_t consumer __attribute__((aligned(64)));
    /* Producer's private state. */
    uint32_t prod_head __attribute__((aligned(64)));
    uint32_t cached_cons;
    /* Consumer's private state. */
    uint32_t cons_head __attribute__((aligned(64)));
    uint32_t cached_prod;
    /* Fixed. */
    uint32_t size __attribute__((aligned(64)));
    uint32_t mask;
    struct fdp_desc *descs;
};

/* Largest ring: 2^24 descriptors. */
#define FDP_RING_MAX_SIZE (1u << 24)

/* Creates a ring of 'size' descriptors in '*ringp'.  Returns 0, EINVAL if
 * 'size' is not a power of two between 1 and FDP_RING_MAX_SIZE, or
 * ENOMEM. */
FDP_API int fdp_ring_create(uint32_t size, struct fdp_ring **ringp);

/* Frees 'ring'.  Accepts NULL. */
FDP_API void fdp_ring_destroy(struct fdp_ring *ring);

/* The number of descriptors the ring holds. */
FDP_API uint32_t fdp_ring_size(const struct fdp_ring *ring);

/* ---- Producer ---- */

/* Reserves up to 'n' free slots; returns how many (0 if the ring is full)
 * and the index of the first in '*idx'.  Fill them with fdp_ring_slot()
 * at *idx, *idx + 1, ..., then submit. */
static inline uint32_t
fdp_ring_reserve(struct fdp_ring *ring, uint32_t n, uint32_t *idx)
{
    uint32_t free_slots = ring->size - (ring->prod_head - ring->cached_cons);

    if (free_slots < n) {
        ring->cached_cons = __atomic_load_n(&ring->consumer,
                                            __ATOMIC_ACQUIRE);
        free_slots = ring->size - (ring->prod_head - ring->cached_cons);
    }
    n = n < free_slots ? n : free_slots;
    *idx = ring->prod_head;
    ring->prod_head += n;
    return n;
}

/* Gives back the last 'n' slots reserved and not submitted (as libxdp's
 * xsk_ring_prod__cancel()). */
static inline void
fdp_ring_cancel(struct fdp_ring *ring, uint32_t n)
{
    ring->prod_head -= n;
}

/* Makes the next 'n' reserved slots visible to the consumer: a release
 * store, so the descriptors written before it are visible to a consumer
 * that acquire-loads the index. */
static inline void
fdp_ring_submit(struct fdp_ring *ring, uint32_t n)
{
    uint32_t p = __atomic_load_n(&ring->producer, __ATOMIC_RELAXED);

    __atomic_store_n(&ring->producer, p + n, __ATOMIC_RELEASE);
}

/* ---- Consumer ---- */

/* Takes up to 'n' filled slots; returns how many (0 if the ring is empty)
 * and the index of the first in '*idx'.  Read them with fdp_ring_slot(),
 * then release. */
static inline uint32_t
fdp_ring_peek(struct fdp_ring *ring, uint32_t n, uint32_t *idx)
{
    uint32_t avail = ring->cached_prod - ring->cons_head;

    if (avail < n) {
        ring->cached_prod = __atomic_load_n(&ring->producer,
                                            __ATOMIC_ACQUIRE);
        avail = ring->cached_prod - ring->cons_head;
    }
    n = n < avail ? n : avail;
    *idx = ring->cons_head;
    ring->cons_head += n;
    return n;
}

/* Gives the next 'n' peeked slots back to the producer: a release store,
 * so the consumer's reads of them happen before the producer, acquiring
 * the index, overwrites them. */
static inline void
fdp_ring_release(struct fdp_ring *ring, uint32_t n)
{
    uint32_t c = __atomic_load_n(&ring->consumer, __ATOMIC_RELAXED);

    __atomic_store_n(&ring->consumer, c + n, __ATOMIC_RELEASE);
}

/* ---- Both ---- */

/* The descriptor at index 'idx' (indices wrap). */
static inline struct fdp_desc *
fdp_ring_slot(struct fdp_ring *ring, uint32_t idx)
{
    return &ring->descs[idx & ring->mask];
}

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_RING_H */
