/*
 * The peer side of a ring port (flowdp/datapath.h), as a NIC would be: what
 * the unit tests and the benchmarks use to put packets into a datapath and
 * take them out.
 *
 * A ring port's four rings carry descriptors of frames in its umem: the
 * peer takes free frames from the fill ring, writes packets into them and
 * submits them on the rx ring; the datapath transmits on the tx ring and the
 * peer gives those frames back on the completion ring.  These functions run
 * on the peer's side of each ring (single producer, single consumer): call
 * them from one thread at a time per port.
 *
 * A broken ring (a frame too small for the packet, a full rx or completion
 * ring where the protocol guarantees room) is a bug in the caller or the
 * datapath: they print what broke and abort, since neither a test nor a
 * benchmark can go on.
 */
#ifndef FDP_TESTS_LIB_PEER_H
#define FDP_TESTS_LIB_PEER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdp_dp_pmd;
struct fdp_port_rings;

/* Takes a free frame from the fill ring of 'r', copies the 'len' bytes of
 * 'pkt' into it and submits it on the rx ring.  Returns false if no frame
 * is free. */
bool test_peer_send(const struct fdp_port_rings *r, const void *pkt,
                    size_t len);

/* Takes every packet from the tx ring of 'r', calls 'cb' (if nonnull) with
 * each, gives the frames back on the completion ring, and returns how many
 * there were. */
typedef void test_peer_cb(void *aux, const uint8_t *pkt, uint32_t len);
uint32_t test_peer_drain(const struct fdp_port_rings *r, test_peer_cb *cb,
                         void *aux);

/* The benchmarks' loop, on the pmd's own thread: sends 'n' packets on 'in'
 * in batches of up to FDP_DP_BATCH (one pmd poll's worth), the 'frame_len'-byte frames of
 * 'frames' ('n_frames' of them, one after the other) in turn from '*next',
 * polls 'pmd' after each batch and drains up to 'ring_size' packets from
 * 'out' without looking at them.  Returns the packets output. */
uint64_t test_peer_forward(struct fdp_dp_pmd *pmd,
                           const struct fdp_port_rings *in,
                           const struct fdp_port_rings *out,
                           const uint8_t *frames, size_t frame_len,
                           size_t n_frames, size_t *next, uint32_t ring_size,
                           uint64_t n);

#endif /* FDP_TESTS_LIB_PEER_H */
