/*
 * The peer side of a ring port (peer.h).
 */
#include <config.h>

#include "tests/lib/peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flowdp/datapath.h"
#include "flowdp/ring.h"

/* A broken ring (peer.h): says what broke and stops. */
static void
peer_broken(const char *what, uint32_t have, size_t need)
{
    fprintf(stderr, "ring peer: %s (%u, need %zu)\n", what, have, need);
    abort();
}

bool
test_peer_send(const struct fdp_port_rings *r, const void *pkt, size_t len)
{
    uint32_t fidx, ridx;

    if (!fdp_ring_peek(r->fill, 1, &fidx)) {
        return false;
    }
    struct fdp_desc d = *fdp_ring_slot(r->fill, fidx);
    fdp_ring_release(r->fill, 1);
    if (d.len < len) {
        peer_broken("fill ring frame shorter than the packet", d.len, len);
    }
    memcpy((uint8_t *) r->umem + d.addr, pkt, len);
    d.len = (uint32_t) len;
    if (fdp_ring_reserve(r->rx, 1, &ridx) != 1) {
        peer_broken("rx ring full with a fill frame in hand", 0, 1);
    }
    *fdp_ring_slot(r->rx, ridx) = d;
    fdp_ring_submit(r->rx, 1);
    return true;
}

uint32_t
test_peer_drain(const struct fdp_port_rings *r, test_peer_cb *cb, void *aux)
{
    uint32_t idx, cidx;
    uint32_t n = fdp_ring_peek(r->tx, UINT32_MAX, &idx);

    for (uint32_t i = 0; i < n; i++) {
        struct fdp_desc d = *fdp_ring_slot(r->tx, idx + i);
        if (cb) {
            cb(aux, (const uint8_t *) r->umem + d.addr, d.len);
        }
        if (fdp_ring_reserve(r->completion, 1, &cidx) != 1) {
            peer_broken("completion ring full", 0, 1);
        }
        *fdp_ring_slot(r->completion, cidx) = d;
        fdp_ring_submit(r->completion, 1);
    }
    fdp_ring_release(r->tx, n);
    return n;
}

uint64_t
test_peer_forward(struct fdp_dp_pmd *pmd, const struct fdp_port_rings *in,
                  const struct fdp_port_rings *out, const uint8_t *frames,
                  size_t frame_len, size_t n_frames, size_t *next,
                  uint32_t ring_size, uint64_t n)
{
    uint64_t sent = 0, got = 0;

    while (sent < n) {
        /* Send: as many frames as both the rx ring and the fill ring allow,
         * up to one batch. */
        uint32_t fidx, ridx;
        uint32_t room = fdp_ring_reserve(in->rx, FDP_DP_BATCH, &ridx);
        uint32_t k = fdp_ring_peek(in->fill, room, &fidx);
        fdp_ring_cancel(in->rx, room - k);
        for (uint32_t i = 0; i < k; i++) {
            struct fdp_desc d = *fdp_ring_slot(in->fill, fidx + i);
            memcpy((uint8_t *) in->umem + d.addr, frames + *next * frame_len,
                   frame_len);
            d.len = (uint32_t) frame_len;
            *fdp_ring_slot(in->rx, ridx + i) = d;
            *next = *next + 1 == n_frames ? 0 : *next + 1;
        }
        fdp_ring_release(in->fill, k);
        fdp_ring_submit(in->rx, k);
        sent += k;

        fdp_dp_pmd_poll(pmd, NULL);

        /* Drain: every transmitted frame straight back to completion. */
        uint32_t tidx, cidx, t = fdp_ring_peek(out->tx, ring_size, &tidx);
        t = fdp_ring_reserve(out->completion, t, &cidx);
        for (uint32_t i = 0; i < t; i++) {
            *fdp_ring_slot(out->completion, cidx + i)
                = *fdp_ring_slot(out->tx, tidx + i);
        }
        fdp_ring_submit(out->completion, t);
        fdp_ring_release(out->tx, t);
        got += t;
    }
    return got;
}
