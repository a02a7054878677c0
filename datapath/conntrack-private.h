/*
 * What datapath/conntrack.c shares with its protocol modules
 * (datapath/conntrack-tcp.c) and its tests: the connection record and the
 * protocol interface.  See the essay at the top of conntrack.c.
 */
#ifndef FDP_CONNTRACK_PRIVATE_H
#define FDP_CONNTRACK_PRIVATE_H 1

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/conntrack.h"

/* One side of a TCP connection, as pf's struct pf_state_peer (and Open
 * vSwitch's struct tcp_peer): the highest sequence number sent plus one
 * ('seqlo'), the highest the peer's window allows ('seqhi'), the largest
 * window seen (unscaled), the window scale (FDP__CT_TCP_WSCALE_* flags
 * with the shift) and the pf state (FDP__CT_TCPS_*). */
struct fdp__ct_peer {
    uint32_t seqlo;
    uint32_t seqhi;
    uint16_t max_win;
    uint8_t wscale;
    uint8_t state;
};

/* A connection record: 96 bytes (two records share three cache lines).  The
 * identity (both directions' tuples, zone, protocol) is written before
 * the record is published in the index and never changes until the
 * record is reclaimed after a grace period, so lock-free readers compare
 * it with plain loads.  Everything after it changes while the connection
 * lives: 'expiry', 'mark' and 'label' are read with relaxed atomic loads
 * by the lock-free path and written under 'lock' (a spinlock byte) or,
 * for 'expiry' on the lock-free path, with a relaxed atomic store;
 * 'l4_state' and 'peer' only ever under 'lock'.
 *
 * For IPv6 connections 'addr' is unused and the addresses live in the
 * record's extension (struct fdp__ct_conn6, a parallel array touched only
 * by IPv6 connections). */
struct fdp__ct_conn {
    /* Identity (immutable while published). */
    uint32_t addr[2][2];        /* [direction][0: src, 1: dst], IPv4. */
    uint16_t port[2][2];        /* [direction][0: src, 1: dst]; see
                                 * ct_tuple_make() for ICMP. */
    uint16_t zone;
    uint8_t proto;
    uint8_t ipv6 : 1;           /* Bool. */
    uint8_t nat : 2;            /* FDP__CT_NAT_SRC or _DST: the
                                 * translation committed with the
                                 * connection, whose translated side is in
                                 * the reply tuple (see the essay). */
    uint8_t : 5;

    /* Life cycle (atomics). */
    uint8_t lock;               /* Spinlock byte: 'l4_state', 'peer',
                                 * 'mark', 'label' writes. */
    uint8_t live;               /* Published and not yet reclaimed. */
    uint8_t dead;               /* Unlinked (or being unlinked). */
    uint8_t l4_state;           /* Other and ICMP: CT_OTHER_* / CT_ICMP_*;
                                 * TCP: unused (see 'peer'). */
    uint32_t mark;
    uint32_t limbo_next;        /* Reclaim list link (id + 1, 0 ends). */
    uint64_t expiry;            /* Milliseconds; expired when now >=. */
    uint64_t label[2];          /* [0] high 64 bits, [1] low. */

    /* TCP: [0] the original direction's sender, [1] the reply's. */
    struct fdp__ct_peer peer[2];

    uint8_t tm;                 /* enum fdp__ct_tm of the last locked
                                 * refresh (for dumps; atomic). */
    uint8_t pad[7];
};
static_assert(sizeof(struct fdp__ct_conn) == 96,
              "an IPv4 connection's record is 96 bytes (the plan's budget)");
static_assert(offsetof(struct fdp__ct_conn, peer) == 64,
              "what UDP and ICMP touch fits in the first 64 bytes");

/* A connection record's 'nat': which side of the original direction its
 * translation rewrites (Open vSwitch's NAT_ACTION_SRC, NAT_ACTION_DST;
 * never both). */
#define FDP__CT_NAT_SRC 1
#define FDP__CT_NAT_DST 2

/* The IPv6 addresses of connection 'id', in a parallel array. */
struct fdp__ct_conn6 {
    uint64_t addr[2][2][2];     /* [direction][src, dst][high, low]. */
};
static_assert(sizeof(struct fdp__ct_conn6) == 64, "one cache line");

/* What a protocol's state update says (Open vSwitch's ct_update_res). */
enum fdp__ct_update {
    FDP__CT_UPDATE_INVALID,     /* +inv. */
    FDP__CT_UPDATE_VALID,       /* +est. */
    FDP__CT_UPDATE_NEW,         /* The old connection ends; a new one may
                                 * start. */
    FDP__CT_UPDATE_VALID_NEW,   /* Still +new (no reply seen yet). */
};

/* TCP (datapath/conntrack-tcp.c).  'tcp' points at the TCP header,
 * 'size' bytes of segment (header and payload, within the IP length),
 * already checked to hold the whole header.  Each is called with the
 * connection's lock held (or, for new_conn, on a record not yet
 * published).  update and new_conn set '*tm' to the timeout class to
 * refresh the expiry with, or FDP__CT_N_TM to leave it.  With 'seq_chk'
 * false (Open vSwitch's tcp_seq_chk off) every segment with valid flags
 * counts as in window. */
bool fdp__ct_tcp_valid_new(const uint8_t *tcp, size_t size);
void fdp__ct_tcp_new_conn(struct fdp__ct_conn *, const uint8_t *tcp,
                          size_t size, enum fdp__ct_tm *tm);
enum fdp__ct_update fdp__ct_tcp_update(struct fdp__ct_conn *,
                                       const uint8_t *tcp, size_t size,
                                       bool reply, bool seq_chk,
                                       enum fdp__ct_tm *tm);

/* pf's TCP states (Open vSwitch's CT_DPIF_TCPS_*, ct-dpif.h). */
enum {
    FDP__CT_TCPS_CLOSED,
    FDP__CT_TCPS_LISTEN,
    FDP__CT_TCPS_SYN_SENT,
    FDP__CT_TCPS_SYN_RECV,
    FDP__CT_TCPS_ESTABLISHED,
    FDP__CT_TCPS_CLOSE_WAIT,
    FDP__CT_TCPS_FIN_WAIT_1,
    FDP__CT_TCPS_CLOSING,
    FDP__CT_TCPS_LAST_ACK,
    FDP__CT_TCPS_FIN_WAIT_2,
    FDP__CT_TCPS_TIME_WAIT,
};

#endif /* FDP_CONNTRACK_PRIVATE_H */
