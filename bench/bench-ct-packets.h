/*
 * flowdp-bench ct suite: the connections and packets every connection
 * tracker in the suite is fed (bench-ct-packets.c).
 *
 * The generator depends on nothing but the C library, so that the same
 * frames go to Open vSwitch's conntrack_execute() (bench-ovs-ct.c, through
 * bench-ovs.h) and to flowdp's tracker, in the same run.  A set of frames
 * is plain bytes: Ethernet, IPv4 (no options) and UDP or TCP (no
 * options), every checksum valid, each frame in a slot of
 * BENCH_CT_SLOT_SIZE bytes and all frames of a set one length.
 *
 * Connections.  Connection 'i' of a family (a seed) goes from client
 * 10.0.0.0 + i / 8 to one of 16 servers 172.16.0.1 to 172.16.0.16, port
 * 53 (UDP) or 80 (TCP), from an ephemeral client port (32768 to 60999, as
 * Linux picks them) drawn from a hash of 'i' and the seed whose low three
 * bits are i % 8: so the (client, client port) pairs of a family are
 * distinct for any i below 2^27, and two clients often share a port
 * towards one server, which is what makes a source NAT to one address
 * search for a free port.  TCP connections have initial sequence numbers
 * drawn from the same hash.
 *
 * Sets.  bench_ct_setup_frames(): what opens each connection, in order:
 * UDP the client's first packet then the server's reply (after which
 * the connection is established); TCP SYN, SYN-ACK, ACK.
 * bench_ct_est_frames(): established traffic, random connections in
 * random directions (TCP: pure ACKs at the sequence numbers the
 * handshake left, which a tracker with window checks accepts however
 * often they repeat).  bench_ct_new_frames(): the first packet of each
 * connection, in order.
 *
 * Thread-safety: none needed; every function works on its arguments only.
 */
#ifndef FDP_BENCH_CT_PACKETS_H
#define FDP_BENCH_CT_PACKETS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A slot holds the longest frame (a UDP frame of the Ethernet minimum,
 * 60 bytes) and keeps every frame on its own cache line. */
#define BENCH_CT_SLOT_SIZE 64

enum bench_ct_proto {
    BENCH_CT_UDP,
    BENCH_CT_TCP,
};

/* Connection 'i' of family 'seed', host byte order. */
struct bench_ct_conn {
    uint32_t client, server;
    uint16_t client_port, server_port;
    uint32_t client_isn, server_isn;    /* TCP only. */
};

void bench_ct_conn_get(uint64_t seed, uint64_t i, enum bench_ct_proto,
                       struct bench_ct_conn *);

/* 'n' frames of 'len' bytes, frame k at data + k * BENCH_CT_SLOT_SIZE,
 * in room for 'capacity'. */
struct bench_ct_frames {
    uint8_t *data;
    size_t n;
    size_t len;
    size_t capacity;
};

static inline const uint8_t *
bench_ct_frame(const struct bench_ct_frames *f, size_t k)
{
    return f->data + k * BENCH_CT_SLOT_SIZE;
}

/* Each returns 0 or ENOMEM; bench_ct_frames_destroy() frees the set.
 * bench_ct_setup_frames() opens connections 'first' to 'first + n_conns
 * - 1' (so that a large table can be set up a chunk at a time). */
int bench_ct_setup_frames(uint64_t seed, enum bench_ct_proto, size_t first,
                          size_t n_conns, struct bench_ct_frames *);
/* The same into a set made by bench_ct_setup_frames() for as many
 * connections or more, without allocating (so that the memory a tracker
 * takes can be told from the frames'); EINVAL if they do not fit. */
int bench_ct_setup_frames_refill(uint64_t seed, enum bench_ct_proto,
                                 size_t first, size_t n_conns,
                                 struct bench_ct_frames *);
int bench_ct_est_frames(uint64_t seed, enum bench_ct_proto, size_t n_conns,
                        size_t n_frames, struct bench_ct_frames *);
int bench_ct_new_frames(uint64_t seed, enum bench_ct_proto, size_t n_conns,
                        struct bench_ct_frames *);
void bench_ct_frames_destroy(struct bench_ct_frames *);

/* The frames that open a connection, per connection (see above). */
size_t bench_ct_setup_frames_per_conn(enum bench_ct_proto);

/* What every tracker in the suite is asked and answers. */

/* Source NAT to addresses 'min_addr' to 'max_addr' and ports 'min_port'
 * to 'max_port' (host byte order), as ct(commit,nat(src=A-B:P-Q)). */
struct bench_ct_nat {
    uint32_t min_addr, max_addr;
    uint16_t min_port, max_port;
};

/* What a tracker made of packets: how many came out +new, +est, +inv and
 * with +snat. */
struct bench_ct_counts {
    uint64_t new, est, inv, snat;
};

#endif /* FDP_BENCH_CT_PACKETS_H */
