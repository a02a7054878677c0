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

struct fdp_ring;

/* A descriptor, as AF_XDP's struct xdp_desc. */
struct fdp_desc {
    uint64_t addr;          /* Buffer: offset in the buffer area. */
    uint32_t len;           /* Bytes of packet in it. */
    uint32_t options;       /* Free for the user (port number, flags). */
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
FDP_API uint32_t fdp_ring_reserve(struct fdp_ring *ring, uint32_t n,
                                  uint32_t *idx);

/* Gives back the last 'n' slots reserved and not submitted (as libxdp's
 * xsk_ring_prod__cancel()). */
FDP_API void fdp_ring_cancel(struct fdp_ring *ring, uint32_t n);

/* Makes the next 'n' reserved slots visible to the consumer. */
FDP_API void fdp_ring_submit(struct fdp_ring *ring, uint32_t n);

/* ---- Consumer ---- */

/* Takes up to 'n' filled slots; returns how many (0 if the ring is empty)
 * and the index of the first in '*idx'.  Read them with fdp_ring_slot(),
 * then release. */
FDP_API uint32_t fdp_ring_peek(struct fdp_ring *ring, uint32_t n,
                               uint32_t *idx);

/* Gives the next 'n' peeked slots back to the producer. */
FDP_API void fdp_ring_release(struct fdp_ring *ring, uint32_t n);

/* ---- Both ---- */

/* The descriptor at index 'idx' (indices wrap). */
FDP_API struct fdp_desc *fdp_ring_slot(struct fdp_ring *ring, uint32_t idx);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_RING_H */
