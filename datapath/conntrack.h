/*
 * Connection tracking (internal to the datapath): the tracker behind the
 * ct() action.  The theory of operation is at the top of
 * datapath/conntrack.c; the semantics are Open vSwitch 3.1's userspace
 * tracker (lib/conntrack.c, conntrack-tcp.c, conntrack-icmp.c,
 * conntrack-other.c) with its NAT, without helpers (alg=) and fragment
 * reassembly for now.
 *
 * Thread-safety classes:
 *   - Packet path (fdp__ct_execute()): any number of threads at once, each
 *     with its own struct fdp__ct_pmd; lock-free for established
 *     connections.  Each call runs in its own RCU read-side section.
 *   - Control (limits, timeouts, counts, dump): any thread, concurrently
 *     with the packet path and with each other.
 *   - Reclaimers (fdp__ct_sweep(), fdp__ct_flush()): any thread that is
 *     not inside an RCU read-side section (they wait for grace periods);
 *     concurrently with everything else, sweeps and flushes serialise
 *     among themselves on a mutex no packet ever takes.
 */
#ifndef FDP_CONNTRACK_H
#define FDP_CONNTRACK_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/key.h>
#include "lib/ct-action.h"

struct fdp__pkt;
struct fdp__ct;
struct fdp__ct_pmd;

/* ct_state bits: FDP_CT_NEW ... FDP_CT_DNAT, in <flowdp/key.h>. */

/* Open vSwitch's default for the total connection limit
 * (DEFAULT_N_CONN_LIMIT in lib/conntrack.c). */
#define FDP_CT_DEFAULT_LIMIT 3000000

/* One direction of a connection, as the ct_nw_src... fields and flushes
 * name it.  IPv4 addresses are in the low 32 bits of 'src.lo'/'dst.lo'.
 * For ICMP and ICMPv6 'src_port' is the type and 'dst_port' the code of
 * the original direction's message (as Open vSwitch's ct_tp_src and
 * ct_tp_dst), and 'icmp_id' the echo identifier; for protocols without
 * ports all three are zero. */
struct fdp__ct_tuple {
    struct fdp_value src, dst;
    uint16_t src_port, dst_port;
    uint16_t icmp_id;
    uint8_t proto;
    bool ipv6;
};

/* The ct action's arguments, for a whole batch (as conntrack_execute()
 * takes them).  'force' implies 'commit'.  The mark and label are set
 * (bits under the mask) on the packet's connection, if it has one, after
 * the lookup; a mask of zero sets nothing. */
struct fdp__ct_args {
    uint16_t zone;              /* Unless 'zones' is given. */
    bool commit;
    bool force;
    uint32_t mark, mark_mask;
    struct fdp_value label, label_mask;
    const struct fdp__ct_nat *nat;  /* NULL: no NAT.  Otherwise the
                                     * nat(...) of the action (lib/ct-
                                     * action.h): a committed new
                                     * connection gets a translation from
                                     * its ranges, and every packet of a
                                     * connection with one is rewritten
                                     * (addresses, ports, checksums; ICMP
                                     * errors' inner headers too). */
};

/* What the tracker says about one packet: the ct_* fields. */
struct fdp__ct_result {
    uint8_t state;              /* FDP_CT_* bits; always has FDP_CT_TRK. */
    uint16_t zone;
    uint32_t mark;
    struct fdp_value label;
    bool has_tuple;             /* False: 'orig' is all zero. */
    struct fdp__ct_tuple orig;  /* The connection's original direction
                                 * (or, without a connection, the
                                 * packet's own). */
    uint32_t cached;            /* The connection a later ct() of the same
                                 * zone takes without a lookup (Open
                                 * vSwitch's pkt->md.conn): 0 for none,
                                 * else FDP__CT_CACHED(id, reply).  The
                                 * caller carries it to the next ct() in
                                 * the key's FDP__CT_CACHE_WORD (see
                                 * fdp__ct_execute()). */
};

/* The cached-connection hint: the low 32 bits of the key word of
 * ct_tp_src and ct_tp_dst (which use only its high 32), the connection's
 * id plus one and whether the packet was its reply. */
#define FDP__CT_CACHE_WORD 24
#define FDP__CT_CACHED(ID, REPLY) \
    (((uint32_t) (ID) + 1) | ((REPLY) ? UINT32_C(0x80000000) : 0))

/* Timeout classes, Open vSwitch's CT_TM_* (lib/conntrack-private.h); the
 * defaults are its ct_dpif_netdev_tp_def through tm_to_ct_dpif_tp(), in
 * seconds: TCP first packet 30, opening 30, established 86400, closing
 * 900, fin_wait 45, closed 30; other first 60, multiple 60, bidir 30;
 * ICMP first 60, reply 30. */
enum fdp__ct_tm {
    FDP__CT_TM_TCP_FIRST_PACKET,
    FDP__CT_TM_TCP_OPENING,
    FDP__CT_TM_TCP_ESTABLISHED,
    FDP__CT_TM_TCP_CLOSING,
    FDP__CT_TM_TCP_FIN_WAIT,
    FDP__CT_TM_TCP_CLOSED,
    FDP__CT_TM_OTHER_FIRST,
    FDP__CT_TM_OTHER_MULTIPLE,
    FDP__CT_TM_OTHER_BIDIR,
    FDP__CT_TM_ICMP_FIRST,
    FDP__CT_TM_ICMP_REPLY,
    FDP__CT_N_TM
};

/* Per-pmd packet counters. */
struct fdp__ct_pmd_stats {
    uint64_t n_packets;
    uint64_t n_created;         /* Connections committed. */
    uint64_t n_invalid;         /* Packets marked +inv. */
    uint64_t n_full;            /* Commits refused by a limit or a full
                                 * table. */
    uint64_t n_nat_exhausted;   /* NAT commits refused: no free reply
                                 * tuple among the candidates Open
                                 * vSwitch would try (the packet stays
                                 * +new, as there). */
};

/* A connection, as a dump gives it. */
struct fdp__ct_entry {
    struct fdp__ct_tuple orig, reply;
    uint16_t zone;
    uint32_t mark;
    struct fdp_value label;
    uint64_t expiry_ms;         /* On the caller's clock. */
    enum fdp__ct_tm tm;         /* Its current timeout class. */
    uint8_t tcp_state[2];       /* pf's states of the original and the
                                 * reply side (CT_DPIF_TCPS_* values); zero
                                 * for other protocols. */
    uint8_t tcp_wscale[2];      /* Their window scales: the shift in the
                                 * low 4 bits, 0x80 if the option was
                                 * seen, 0x40 if the scale is unknown
                                 * (conntrack-tcp.c's WSCALE_*); zero for
                                 * other protocols. */
};

/* ---- Life cycle (control) ---- */

/* Creates a tracker with room for 'capacity' connections (1 to
 * FDP__CT_MAX_CAPACITY; memory is reserved up front and touched as
 * connections are created, fdp__ct_bytes_per_conn() bytes each) and the
 * total limit min(capacity, FDP_CT_DEFAULT_LIMIT).  Returns 0, EINVAL or
 * ENOMEM. */
#define FDP__CT_MAX_CAPACITY (1u << 30)
int fdp__ct_create(uint32_t capacity, struct fdp__ct **);

/* Makes the index resident (up to 'max_bytes' more of it per call, from
 * where the last call stopped) and returns true once all of it is.  Every
 * new connection lands on two random buckets, so the first few thousand
 * connections of a fresh tracker touch every page of the index anyway,
 * each first touch a page fault (with huge pages, a 2 MiB clear: a stall
 * of the pmd of hundreds of microseconds).  The owner calls this off the
 * packet path (at start, or a slice per housekeeping round) so that no
 * pmd takes those faults.  Any thread, concurrently with everything
 * (it changes no byte). */
bool fdp__ct_populate(struct fdp__ct *, size_t max_bytes);

/* Frees 'ct' (NULL is fine).  No other thread may use it any more, and
 * every pmd context must have been destroyed. */
void fdp__ct_destroy(struct fdp__ct *);

/* A packet thread's context: its counters and its cache of free
 * connection ids.  Returns 0 or ENOMEM. */
int fdp__ct_pmd_create(struct fdp__ct *, struct fdp__ct_pmd **);
void fdp__ct_pmd_destroy(struct fdp__ct_pmd *);
void fdp__ct_pmd_stats(const struct fdp__ct_pmd *,
                       struct fdp__ct_pmd_stats *);

/* ---- Packet path ---- */

/* Runs 'n' packets (any mix of IPv4, IPv6 and others) through the tracker
 * as one ct action with 'args', at time 'now_ms' (milliseconds, any epoch
 * the caller keeps monotonic), in zone 'zones[i]' if 'zones' is nonnull,
 * else args->zone.  Writes results[i] for each.  Packets are modified
 * only by NAT (args->nat), in place: their layout and key stay valid for
 * the headers they have, not for the values rewritten (the key's
 * addresses and ports are what the tracker reads, so a packet goes to the
 * next ct() with its key extracted again).  The key's ct_state and
 * ct_zone are read: a packet whose ct_state has +snat or +dnat from a
 * ct() of the same zone is looked up by its reverse tuple, is not
 * translated again and keeps those bits (Open vSwitch's natted lookup);
 * a packet from a port has them zero.  Open vSwitch's ct_state of one
 * zone carries from one ct() to the next (process_one() adds to it, and
 * resets it only in another zone): the key's ct_state is that prior
 * state when its ct_zone is the zone.  The low 32 bits of key word
 * FDP__CT_CACHE_WORD are the previous ct()'s result 'cached' (zero from
 * a port and after ct_clear, or when the packet's addresses or ports
 * were rewritten since, as Open vSwitch's pkt_metadata_init_conn()
 * does): a packet with one in the same zone, unless 'force', takes
 * process_one_fast()'s path: no lookup, no state update, its ct_state
 * kept, the mark and label read and set, and NAT applied as
 * handle_nat() does.  A ct() with nat caches nothing. */
void fdp__ct_execute(struct fdp__ct_pmd *, struct fdp__pkt *const *pkts,
                     size_t n, const struct fdp__ct_args *args,
                     const uint16_t *zones, uint64_t now_ms,
                     struct fdp__ct_result *results);

/* ---- Limits, timeouts and counts (control) ---- */

/* The total limit: commits beyond it are refused (the packet stays
 * +new).  0 < limit <= capacity, else EINVAL.  Lowering it removes
 * nothing. */
int fdp__ct_set_limit(struct fdp__ct *, uint32_t limit);
uint32_t fdp__ct_get_limit(const struct fdp__ct *);
/* The capacity it was created with: the highest limit it takes. */
uint32_t fdp__ct_get_capacity(const struct fdp__ct *);

/* The limit of 'zone' (0: no limit of its own; the default applies) and
 * the default zone limit (0: none), as ovs-appctl dpctl/ct-set-limits. */
void fdp__ct_set_zone_limit(struct fdp__ct *, uint16_t zone, uint32_t limit);
void fdp__ct_set_default_zone_limit(struct fdp__ct *, uint32_t limit);
uint32_t fdp__ct_get_zone_limit(const struct fdp__ct *, uint16_t zone);
uint32_t fdp__ct_get_default_zone_limit(const struct fdp__ct *);

/* Connections in the table (including expired ones not yet swept). */
uint32_t fdp__ct_count(const struct fdp__ct *);
uint32_t fdp__ct_zone_count(const struct fdp__ct *, uint16_t zone);

/* Sets the timeout of class 'tm' to 'seconds' (1 to 2^31 / 1000), for
 * connections whose timer is next refreshed.  Returns 0 or EINVAL. */
int fdp__ct_set_timeout(struct fdp__ct *, enum fdp__ct_tm, uint32_t seconds);
uint32_t fdp__ct_get_timeout(const struct fdp__ct *, enum fdp__ct_tm);

/* The timeout of class 'tm' in 'zone' alone (Open vSwitch's per-zone
 * timeout policies), overriding the global one; 0 seconds removes the
 * override.  Applies when a connection's timer is next refreshed.
 * Returns 0, EINVAL ('tm' out of range, more than 2^31 / 1000 seconds) or
 * ENOMEM.  The getter returns the override, 0 if none. */
int fdp__ct_set_zone_timeout(struct fdp__ct *, uint16_t zone,
                             enum fdp__ct_tm, uint32_t seconds);
uint32_t fdp__ct_get_zone_timeout(const struct fdp__ct *, uint16_t zone,
                                  enum fdp__ct_tm);

/* TCP sequence checking (Open vSwitch's tcp_seq_chk, on by default):
 * off, out-of-window segments are not +inv. */
void fdp__ct_set_tcp_seq_chk(struct fdp__ct *, bool);
bool fdp__ct_get_tcp_seq_chk(const struct fdp__ct *);

/* Bytes of memory per connection at full capacity (record, both index
 * entries at the index's maximum load, the free-id stack). */
size_t fdp__ct_bytes_per_conn(bool ipv6);

/* ---- Dump (control) ---- */

/* Calls 'cb(entry, aux)' for each unexpired connection at 'now_ms' (of
 * 'zone' only if 'zone' is nonnull), in no particular order, until it
 * returns false.  Connections created or removed during the dump may or
 * may not be seen; none is seen twice.  Never blocks the packet path. */
void fdp__ct_dump(struct fdp__ct *, const uint16_t *zone, uint64_t now_ms,
                  bool (*cb)(const struct fdp__ct_entry *, void *aux),
                  void *aux);

/* ---- Reclaimers ---- */

/* Expiry, driven by the owner (a background thread of the datapath):
 * looks at up to 'budget' connection records from where the last sweep
 * stopped, removes those expired at 'now_ms', then waits for a grace
 * period and returns their memory (and that of connections other calls
 * removed) to the free pool.  Returns the number of connections removed;
 * '*wrapped' is set when the sweep reached the end of the table and will
 * start again from the beginning. */
uint32_t fdp__ct_sweep(struct fdp__ct *, uint64_t now_ms, uint32_t budget,
                       bool *wrapped);

/* Removes every connection (of 'zone' if nonnull; only the one whose
 * original or reply direction is 'tuple' in that zone, or zone 0, if
 * 'tuple' is nonnull), a slice of records at a time, and reclaims them.
 * Returns the number removed. */
uint32_t fdp__ct_flush(struct fdp__ct *, const uint16_t *zone,
                       const struct fdp__ct_tuple *tuple);

/* Removes the connection of each 'tuples[i]' in 'zones[i]' (either
 * direction), as that many fdp__ct_flush() calls with a tuple would, with
 * one grace period per slice of removals instead of one each.  Returns
 * the number removed. */
uint32_t fdp__ct_flush_tuples(struct fdp__ct *, const uint16_t *zones,
                              const struct fdp__ct_tuple *tuples, size_t n);

#endif /* FDP_CONNTRACK_H */
