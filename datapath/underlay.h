/*
 * The underlay (internal to the datapath): what tunnel ports ask of it,
 * and the datapath's hooks into it.  The theory of operation is at the
 * top of datapath/underlay.c; the user's view is flowdp/underlay.h.
 *
 * Thread-safety: fdp__underlay_resolve(), fdp__underlay_version() and
 * fdp__underlay_is_local() are lookups: any thread, lock-free (they take
 * an RCU read-side section of their own, so a pmd's enclosing one is not
 * needed but costs nothing).  fdp__underlay_rx() and
 * fdp__underlay_pmd_work() run on pmds inside their read-side section.
 * The others are control functions, called as each says.
 */
#ifndef FDP_UNDERLAY_H
#define FDP_UNDERLAY_H 1

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/underlay.h>

struct fdp_dp;
struct fdp__pkt;
struct fdp__underlay;

/* ---- For tunnel ports ---- */

struct fdp__nexthop {
    uint32_t port_no;          /* Underlay port to send on. */
    struct in6_addr src;       /* Local source address (v4-mapped for IPv4). */
    uint64_t src_mac, dst_mac; /* 48-bit, host order as in the key. */
};
/* 0; EHOSTUNREACH (no route, counted); EAGAIN (neighbour unknown: a request was sent, counted). */
int fdp__underlay_resolve(struct fdp_dp *, const struct in6_addr *dst, const struct in6_addr *src_or_null, struct fdp__nexthop *);
/* A counter that changes whenever an address, route or neighbour changes: prebuilt headers are valid while it is unchanged. */
uint64_t fdp__underlay_version(const struct fdp_dp *);
/* True if 'addr' is one of the datapath's addresses (decap accepts only packets for them). */
bool fdp__underlay_is_local(const struct fdp_dp *, const struct in6_addr *addr);

/* ---- The datapath's hooks ---- */

/* Creates and destroys a datapath's underlay (in dp.c's create and
 * destroy: no pmd polls). */
int fdp__underlay_create(struct fdp__underlay **);
void fdp__underlay_destroy(struct fdp__underlay *);

/* Port 'port_no' is going away: its addresses, routes, MAC and
 * neighbours go with it.  Under the datapath's mutex, after the pmds
 * stopped using the port. */
void fdp__underlay_port_deleted(struct fdp__underlay *, uint32_t port_no);

/* True if port 'port_no' has an address: a pmd then passes the batches
 * it receives there through fdp__underlay_rx().  A load and a test when
 * the datapath has no address at all. */
bool fdp__underlay_rx_wanted(struct fdp__underlay *, uint32_t port_no);

/* What fdp__underlay_rx() did with a packet. */
enum fdp__underlay_verdict {
    FDP__UNDERLAY_PASS,         /* Not ours (perhaps snooped): on to the
                                 * pipeline as it came. */
    FDP__UNDERLAY_REPLY,        /* A request for one of the port's
                                 * addresses: the packet was rewritten
                                 * into its answer (its new size in
                                 * pkt->size), to be sent out of the port
                                 * it came in on, and not classified. */
};

/* Looks at 'pkt', received on port 'port_no': learns from ARP and ND it
 * may learn from, and answers requests for the port's addresses.  'room'
 * is the number of bytes writable from pkt->data (an answer may be
 * longer than its question).  Pmd, in its RCU read-side section. */
enum fdp__underlay_verdict fdp__underlay_rx(struct fdp__underlay *,
                                            uint32_t port_no,
                                            struct fdp__pkt *pkt,
                                            uint32_t room);

/* Sends a frame that the underlay generated: copies the 'size' bytes at
 * 'data' into a frame and queues it for port 'port_no'.  Returns false if
 * it could not (no such port, no free frame). */
typedef bool fdp__underlay_emit_fn(void *aux, uint32_t port_no,
                                   const void *data, size_t size);

/* A pmd's share of the underlay's work, once per poll: sends the requests
 * waiting to be sent and, if 'tick' (the caller passes it every few dozen
 * polls, so that the clock is not read on every one), ages a slice of the
 * neighbour cache once a second (never waiting for a lock: another thread
 * holding it means the work waits for a later poll).  Pmd, in its RCU
 * read-side section. */
void fdp__underlay_pmd_work(struct fdp__underlay *,
                            fdp__underlay_emit_fn *emit, void *aux,
                            bool tick);

/* ---- For tests ---- */

/* Replaces the underlay's clock (monotonic milliseconds) with 'now(aux)';
 * NULL restores the real one.  Set it while no pmd polls. */
void fdp__underlay_set_clock(struct fdp_dp *, int64_t (*now)(void *aux),
                             void *aux);

/* Ages the whole neighbour cache now (what fdp__underlay_pmd_work() does
 * a slice at a time), queueing the renewal requests.  Any thread. */
void fdp__underlay_age(struct fdp_dp *);

/* Sends the requests waiting to be sent through 'emit' (what
 * fdp__underlay_pmd_work() does first); returns how many.  Any thread. */
size_t fdp__underlay_flush_requests(struct fdp_dp *,
                                    fdp__underlay_emit_fn *emit, void *aux);

#endif /* FDP_UNDERLAY_H */
