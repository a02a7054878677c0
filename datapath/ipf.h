/*
 * IP fragment reassembly before connection tracking (internal to the
 * datapath): Open vSwitch 3.1's lib/ipf.c semantics.  The theory of
 * operation is at the top of datapath/ipf.c.
 *
 * How the datapath uses it, for the packets that go through one ct action:
 *
 *   1. fdp__ipf_preprocess() looks at each packet.  A fragment it accepts
 *      is copied into the module's own memory and marked held: the caller
 *      takes it out of the batch and recycles its frame as if dropped (the
 *      packet is not lost: it comes back in step 3).  Every other packet,
 *      including fragments the module refuses (too small, overlapping, over
 *      a limit, reassembly disabled), goes to the tracker as before, which
 *      marks a fragment +inv as Open vSwitch's does.
 *   2. For each list of fragments the batch completed, preprocess returns
 *      a reassembly: the whole packet, in memory of its own (it may be
 *      larger than a datapath frame).  The caller runs it through
 *      fdp__ct_execute() in the reassembly's zone like any other packet.
 *   3. fdp__ipf_postprocess() writes what the tracker did to the whole
 *      packet (NAT's addresses; ports and L4 checksum in the first
 *      fragment) into the held fragments and hands them back, in offset
 *      order, as struct fdp__pkt in the module's memory, each with the key
 *      and layout it arrived with.  The caller copies each into a frame
 *      and sends it on with the reassembled packet's ct result, then calls
 *      fdp__ipf_reass_free().
 *
 * Thread-safety classes:
 *   - Packet path (preprocess): any number of threads at once.  A packet
 *     that is not a fragment takes no lock and writes no shared memory;
 *     a fragment locks the one shard of lists its key hashes to.
 *   - Reassemblies (postprocess, reass_free): the thread that got the
 *     reassembly from preprocess, or any one thread it hands it to: a
 *     reassembly belongs to its caller alone.
 *   - Control (set_*, get_status, dump) and expiry (fdp__ipf_expire()):
 *     any thread, concurrently with everything.
 *   - Life cycle: create and destroy, with no other call running.
 */
#ifndef FDP_IPF_H
#define FDP_IPF_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/execute.h"

struct fdp__ipf;
struct fdp__ipf_list;

/* Open vSwitch's limits (lib/ipf.c). */
#define FDP__IPF_MIN_FRAG_LBOUND 400       /* Lowest settable minimum. */
#define FDP__IPF_V4_MIN_FRAG_DEFAULT 1200
#define FDP__IPF_V6_MIN_FRAG_DEFAULT 1280
#define FDP__IPF_MAX_FRAGS_DEFAULT 1000
#define FDP__IPF_MAX_FRAGS_UBOUND 5000
#define FDP__IPF_LIST_TIMEOUT_MS 15000

/* A complete list of fragments, reassembled: the caller's alone from
 * preprocess until fdp__ipf_reass_free(). */
struct fdp__ipf_reass {
    /* The whole packet: Ethernet and IP headers of the first fragment
     * (the IPv6 fragment header removed), then all the data.  'pkt.key'
     * and 'pkt.layout' are extracted from these bytes; the key's pipeline
     * words (registers, metadata) and in_port are the first fragment's.
     * The tracker may rewrite the bytes (NAT). */
    struct fdp__pkt pkt;
    uint16_t zone;              /* The zone the fragments came with. */
    bool ipv6;

    /* Filled by fdp__ipf_postprocess(): the fragments in offset order,
     * their bytes in the module's memory. */
    struct fdp__pkt *frags;
    size_t n_frags;

    struct fdp__ipf_list *list; /* Private. */
};

/* Counters and settings of one address family, as ipf-get-status prints
 * them (Open vSwitch's struct ipf_proto_status). */
struct fdp__ipf_proto_status {
    bool enabled;
    uint32_t min_frag_size;
    uint64_t n_accepted;        /* Fragments held. */
    uint64_t n_completed;       /* Fragments sent on after reassembly. */
    uint64_t n_expired;         /* Fragments of lists that timed out. */
    uint64_t n_too_small;       /* Refused under the minimum size. */
    uint64_t n_overlap;         /* Refused as overlapping a held one. */
    uint64_t n_purged;          /* Dropped after reassembly, unsent. */
};

struct fdp__ipf_status {
    struct fdp__ipf_proto_status v4, v6;
    uint32_t nfrag;             /* Fragments held now. */
    uint32_t nfrag_max;
};

/* One list of fragments, as a dump gives it (Open vSwitch's
 * ipf_dump_create() fields). */
struct fdp__ipf_list_info {
    bool ipv6;
    uint8_t src[16], dst[16];   /* IPv4 addresses in the first 4 bytes. */
    uint32_t recirc_id;
    uint32_t ip_id;
    uint16_t zone;
    uint8_t nw_proto;           /* 0 for IPv6, as Open vSwitch keys it. */
    uint32_t n_frags;
    const char *state;          /* Open vSwitch's state names. */
};

/* ---- Life cycle ---- */

/* Creates a reassembler with Open vSwitch's defaults: both families
 * enabled, minimum fragment sizes 1200 (IPv4) and 1280 (IPv6) bytes, at
 * most 1000 fragments held.  Returns 0, ENOMEM or EIO (no random key). */
int fdp__ipf_create(struct fdp__ipf **);

/* Frees 'ipf' and every fragment it holds (NULL is fine).  Reassemblies
 * the caller still has must have been freed. */
void fdp__ipf_destroy(struct fdp__ipf *);

/* ---- Packet path ---- */

/* Looks at the 'n' packets about to go through one ct action, at
 * 'now_ms' (milliseconds, the tracker's clock).  Packet i is in zone
 * 'zones[i]' if 'zones' is nonnull, else 'zone'; 'recirc_id' names the
 * place in the pipeline they reached (Open vSwitch keys lists by its
 * recirculation id: fragments of one packet that reach different ct
 * actions are different lists).  Sets held[i] for each fragment it
 * copied and keeps (the caller no longer transmits that packet and may
 * reuse its memory at once), false for the others.  Writes to 'reass'
 * (room for 'n') the lists this batch completed and returns how many.
 * Fragments of lists that could not be reassembled stay held until their
 * list expires.  Never fails: without memory a fragment is not held. */
size_t fdp__ipf_preprocess(struct fdp__ipf *, struct fdp__pkt *const *pkts,
                           size_t n, const uint16_t *zones, uint16_t zone,
                           uint32_t recirc_id, uint64_t now_ms, bool *held,
                           struct fdp__ipf_reass **reass);

/* Whether preprocess can hold anything at all: false when both families
 * are disabled, so that the datapath can skip calling it. */
bool fdp__ipf_enabled(const struct fdp__ipf *);

/* After the tracker ran on 'r->pkt': copies its addresses into every
 * fragment (IPv4 header checksums updated incrementally) and its first
 * fragment's worth of data (the transport header with its ports and
 * checksum) into the first fragment, then points r->frags at the
 * fragments (r->n_frags of them).  Without NAT the fragments come back
 * byte for byte as they came.  Their keys are as they arrived (as the
 * tracker's NAT, they are not updated for rewritten values). */
void fdp__ipf_postprocess(struct fdp__ipf *, struct fdp__ipf_reass *);

/* Frees 'r' with its fragments (counted as purged if never
 * postprocessed). */
void fdp__ipf_reass_free(struct fdp__ipf *, struct fdp__ipf_reass *);

/* ---- Expiry ---- */

/* Frees lists not completed within FDP__IPF_LIST_TIMEOUT_MS of their first
 * fragment, at most 'budget' of them; returns how many.  Preprocess also
 * expires a little in every shard it locks, so memory stays bounded by
 * the fragment limit without this, but lists in shards no fragment
 * visits wait for it: the datapath calls it from its background thread. */
uint32_t fdp__ipf_expire(struct fdp__ipf *, uint64_t now_ms, uint32_t budget);

/* ---- Control ---- */

/* ipf-set-enabled / ipf-set-disabled: reassembly of one family on or off.
 * Held fragments stay until completed or expired. */
void fdp__ipf_set_enabled(struct fdp__ipf *, bool ipv6, bool enabled);

/* ipf-set-min-frag: the smallest size (IP header included) a fragment
 * other than the last may have.  Returns 0, or EINVAL below
 * FDP__IPF_MIN_FRAG_LBOUND.  As in Open vSwitch there is no upper bound:
 * a huge minimum refuses every fragment but last ones. */
int fdp__ipf_set_min_frag(struct fdp__ipf *, bool ipv6, uint32_t size);

/* ipf-set-max-nfrags: the most fragments held at once.  Returns 0, or
 * EINVAL above FDP__IPF_MAX_FRAGS_UBOUND.  Lowering it frees nothing. */
int fdp__ipf_set_max_nfrags(struct fdp__ipf *, uint32_t n);

/* ipf-get-status. */
void fdp__ipf_get_status(const struct fdp__ipf *, struct fdp__ipf_status *);

/* Calls 'cb(info, aux)' for each list held, until it returns false.  Locks
 * one shard at a time: lists that change during the dump may be seen in
 * either state. */
void fdp__ipf_dump(struct fdp__ipf *,
                   bool (*cb)(const struct fdp__ipf_list_info *, void *aux),
                   void *aux);

#endif /* FDP_IPF_H */
