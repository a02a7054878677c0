/*
 * Single-producer / single-consumer descriptor rings.
 *
 * What it is for
 * ==============
 * Ports move packets between threads (a receive thread, the datapath
 * thread, a transmit thread) through rings of descriptors, as AF_XDP
 * sockets do with the kernel, without locks and with as few shared cache
 * line transfers as possible.
 *
 * Design
 * ======
 * Two free-running 32-bit indices, 'producer' and 'consumer': slot i is at
 * descs[i & mask]; producer - consumer slots are filled.  Each index is
 * written by one side only and sits on its own cache line.  Each side
 * keeps private state on a third and fourth line: its own head (slots
 * reserved or peeked but not yet submitted or released) and a cached copy
 * of the other side's index, refreshed only when the cached value says the
 * ring is full (producer) or empty (consumer).  So a batch of 32 costs one
 * release store and, at most, one acquire load of the other line.
 *
 * Invariants
 * ==========
 * consumer <= cons_head <= producer <= prod_head <= consumer + size
 * (modulo 2^32).  The producer writes only slots the consumer has
 * released (below consumer + size); the consumer reads only slots the
 * producer has submitted (below producer).
 *
 * Ordering: submit is a release store of 'producer', so the descriptors
 * written before it are visible to a consumer that acquire-loads it;
 * release is a release store of 'consumer', so the consumer's reads of the
 * slots happen before the producer, acquire-loading it, overwrites them.
 *
 * Worked example
 * ==============
 * Size 8.  The producer reserves 5 (prod_head 0 -> 5), fills slots 0..4,
 * submits 5 (producer = 5).  The consumer peeks 8: its cached producer (0)
 * says empty, so it loads producer (5) and gets 5 slots at index 0
 * (cons_head = 5); it reads them and releases 5 (consumer = 5).  The
 * producer now reserves 8: cached consumer 0 leaves 3 free (8 - 5), fewer
 * than asked, so it loads consumer (5): 8 free; it gets 8 at index 5,
 * which wrap to slots 5, 6, 7, 0, 1, 2, 3, 4.
 *
 * The burst operations are inline in flowdp/ring.h (libxdp's xsk.h does
 * the same): this file only creates and destroys rings.
 *
 * Reference: Linux Documentation/networking/af_xdp.rst; libxdp's xsk.h.
 */
#include <config.h>

#include <flowdp/ring.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
fdp_ring_create(uint32_t size, struct fdp_ring **ringp)
{
    *ringp = NULL;
    if (!size || size > FDP_RING_MAX_SIZE || (size & (size - 1))) {
        return EINVAL;
    }
    struct fdp_ring *r = aligned_alloc(64, sizeof *r);
    if (!r) {
        return ENOMEM;
    }
    memset(r, 0, sizeof *r);
    r->descs = calloc(size, sizeof *r->descs);
    if (!r->descs) {
        free(r);
        return ENOMEM;
    }
    r->size = size;
    r->mask = size - 1;
    *ringp = r;
    return 0;
}

void
fdp_ring_destroy(struct fdp_ring *r)
{
    if (r) {
        free(r->descs);
        free(r);
    }
}

uint32_t
fdp_ring_size(const struct fdp_ring *r)
{
    return r->size;
}
