/*
 * flowdp: the datapath.
 *
 * Packets in, packets out.  A datapath (struct fdp_dp) owns ports and a
 * pool of packet buffers, and forwards packets through a flow table
 * (table.h) that the caller owns and changes as it likes:
 *
 *   port rx -> extract -> exact-match cache -> fdp_table_lookup_batch()
 *           -> actions -> port tx
 *
 * in batches of up to FDP_DP_BATCH packets.  Packet processing runs in
 * poll-mode threads (struct fdp_dp_pmd), each with its own exact-match
 * cache; control (ports, statistics) runs on any other thread.
 *
 * Packet parsing (fdp_packet_extract()) turns the bytes of an Ethernet
 * frame into a flow key (key.h), as Open vSwitch's flow_extract() does.
 *
 * Buffers.  As with an AF_XDP UMEM, a datapath has one area of fixed-size
 * frames; a descriptor's 'addr' is the offset of a packet's first byte in
 * it.  Each frame belongs to exactly one party at a time: the datapath's
 * free pool, a port's rings, or the peer on the other side of a ring
 * port.  Frames keep FDP_DP_HEADROOM bytes in front of the packet for
 * pushed VLAN tags.
 *
 * Ports.  A port has an OpenFlow port number (1..0xfeff, what in_port
 * matches and output names) and a back end given as TYPE[:ARGS]:
 *   ring[:size=N]                 in-process descriptor rings (ring.h),
 *                                 N a power of two (default 1024).
 *   pcap:rx=FILE[,tx=FILE]        libpcap capture files: rx reads an
 *   pcap:tx=FILE                  Ethernet capture (then is exhausted),
 *                                 tx writes one (microsecond stamps;
 *                                 a packet keeps the time it was read).
 *   afxdp:dev=IF[,queue=Q][,mode=auto|copy|zc]
 *                                 an AF_XDP socket on queue Q (default 0)
 *                                 of interface IF, through libxdp, whose
 *                                 XDP program redirects the queue to the
 *                                 socket.  The datapath's buffer area is
 *                                 the UMEM, shared by all its afxdp ports,
 *                                 so forwarding between them copies
 *                                 nothing.  mode=auto: zero copy where the
 *                                 driver can, else copy; native XDP, else
 *                                 generic.  copy: copy mode, native XDP,
 *                                 else generic.  zc: zero copy and native
 *                                 XDP or fail.  Frames of at most 4096
 *                                 bytes.  EOPNOTSUPP where flowdp was
 *                                 built without libxdp.
 *   afpacket:dev=IF               an AF_PACKET socket bound to IF with
 *                                 TPACKET_V3 rx and tx rings (packets are
 *                                 copied); promiscuous, not receiving
 *                                 what it sends.
 *   vxlan:OPTS, geneve:OPTS, gre:OPTS
 *                                 a tunnel port, with no device: see
 *                                 "Tunnels" below.
 * Live ports (afxdp, afpacket) never reach their end; opening one fails
 * with ENODEV (no such interface), EPERM (not permitted), EOPNOTSUPP (XDP
 * or zero copy not supported), EINVAL (a queue out of range, a bad
 * option), EBUSY (the queue is taken) or another errno from the kernel,
 * with a message naming the interface and the kernel's reason.
 * A ring port's peer (the "NIC" side, in the embedding program) takes free
 * frames from the fill ring, writes packets into them and submits them on
 * the rx ring; it takes sent packets from the tx ring and gives the frames
 * back on the completion ring, exactly as AF_XDP's user space does with
 * the kernel, with the roles of the two sides swapped.
 *
 * Thread-safety
 * =============
 * fdp_packet_extract() is pure; call it from any thread.
 * Control (create, destroy, port add/del, set_upcall, pmd create/destroy,
 * stats): any thread, serialised on the datapath's mutex; ports are
 * published under RCU, so adding or removing one never stops a pmd.
 * fdp_dp_pmd_poll(): one thread per pmd; pmds run concurrently.
 */
#ifndef FLOWDP_DATAPATH_H
#define FLOWDP_DATAPATH_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>
#include <flowdp/key.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where each layer starts in the packet, or -1 if absent. */
struct fdp_packet_layout {
    int32_t l2;             /* Ethernet header. */
    int32_t l2_5;           /* The outer 802.1Q/802.1ad tag, if any. */
    int32_t l3;             /* IPv4, IPv6 or ARP header. */
    int32_t l4;             /* TCP, UDP, SCTP, ICMP or ICMPv6 header. */
};

/* Parses the 'size' bytes at 'data', received on OpenFlow port 'in_port'
 * (its low 16 bits), into 'key' (all other fields zero), and, if 'layout'
 * is nonnull, where each layer starts.  The key is the one Open vSwitch's
 * flow_extract() gives for the same bytes, for the fields key.h has.
 * Understands Ethernet II, 802.3 LLC/SNAP, up to two 802.1Q or 802.1ad
 * tags (the outer one goes to vlan_tci, with the CFI bit set to say
 * "tagged"; a third tag's TPID, or a tag with no type after it, is
 * dl_type), ARP, IPv4 (options, fragments), IPv6 (hop-by-hop, routing,
 * destination options, AH and fragment headers; a later fragment has
 * nw_proto 44), TCP, UDP, SCTP, ICMP, ICMPv6 and IGMP (type and code in
 * tp_src and tp_dst).  A truncated or malformed header ends parsing: the
 * key holds the layers before it, as flow_extract()'s does (an IPv6
 * extension header cut short keeps only the addresses); transport headers
 * are read within the IP length, never from Ethernet padding.  Never
 * reads past 'size' bytes.  datapath/extract.c lists the details and the
 * fields of flow_extract() flowdp does not keep. */
FDP_API void fdp_packet_extract(const void *data, size_t size,
                                uint32_t in_port, struct fdp_key *key,
                                struct fdp_packet_layout *layout);

/* ---- Datapaths ---- */

struct fdp_dp;
struct fdp_dp_pmd;
struct fdp_actions;
struct fdp_ring;
struct fdp_table;

/* Packets per batch. */
#define FDP_DP_BATCH 32

/* Bytes of each frame in front of a received packet: room for pushing
 * VLAN tags (4 bytes each) without copying. */
#define FDP_DP_HEADROOM 256

/* How a pmd uses one of its caches. */
enum fdp_dp_cache_mode {
    FDP_DP_CACHE_AUTO,          /* While it pays: the pmd measures the
                                 * cycles per packet of classification
                                 * with and without the cache (a trial of
                                 * 64 batches of the other choice every
                                 * 1024, up to every 32768 while the
                                 * choice wins by 2x) and keeps the
                                 * cheaper. */
    FDP_DP_CACHE_ON,            /* Always. */
    FDP_DP_CACHE_OFF,           /* Never (no memory taken). */
};

struct fdp_dp_options {
    uint32_t n_frames;          /* Frames in the buffer area (default
                                 * 16384). */
    uint32_t frame_size;        /* Bytes per frame, a power of two from
                                 * 2048 to 65536 (default 2048): the
                                 * largest packet is frame_size -
                                 * FDP_DP_HEADROOM. */
    uint32_t emc_insert_inv_prob;   /* A lookup result enters the
                                 * exact-match cache with probability
                                 * 1/N (default 100, as Open vSwitch); 1
                                 * always; 0 turns the cache off. */
    uint32_t n_pmds;            /* Poll-mode threads that will share the
                                 * ports (default 1). */
    enum fdp_dp_cache_mode emc_mode;    /* Default AUTO. */
    /* The signature match cache (SMC): a second-level cache of 16-bit
     * signatures of the key's hash, each naming the flow it led to, with
     * no keys: 16 bytes per entry, so it holds the 100,000s of flows that
     * make the exact-match cache thrash.  A hit is checked against the
     * flow's match, which gives the right answer only if no packet
     * matches two flows: the SMC serves disjoint tables only
     * (fdp_table_set_disjoint(), a megaflow cache) and is bypassed
     * otherwise. */
    enum fdp_dp_cache_mode smc_mode;    /* Default AUTO. */
    uint32_t smc_entries;       /* A power of two from 4 to 2^24 (default
                                 * 2^20: 16 MiB per pmd, taken only as the
                                 * cache fills). */
    uint32_t smc_insert_inv_prob;   /* As emc_insert_inv_prob (default 1:
                                 * every table hit; 0 turns it off). */
    uint32_t ct_capacity;       /* Connections the tracker behind the ct
                                 * action has room for, 1 to 2^30
                                 * (default 3,000,000, Open vSwitch's
                                 * default limit); the limit can be set
                                 * up to it.  Memory is reserved, not
                                 * taken: about 128 bytes a connection as
                                 * connections are made. */
};

/* Sets 'options' to the defaults. */
FDP_API void fdp_dp_options_init(struct fdp_dp_options *options);

/* Creates a datapath that forwards with 'table' (which the caller keeps
 * and must destroy after the datapath).  'options' may be NULL for the
 * defaults.  Returns 0, EINVAL for a bad option or a FLOWDP_CPU that names
 * no level, ENOTSUP for a FLOWDP_CPU level this CPU or build lacks (see
 * fdp_cpu_init()), or ENOMEM. */
FDP_API int fdp_dp_create(struct fdp_table *table,
                          const struct fdp_dp_options *options,
                          struct fdp_dp **dpp);

struct fdp_pipeline;

/* Creates a datapath that forwards with the multi-table 'pipeline'
 * (pipeline.h; the caller keeps it and destroys it after the datapath), as
 * fdp_dp_create() otherwise.  Its caches map a packet's key to the outcome
 * of the whole pipeline: the composed actions and the flows hit, valid
 * for the pipeline's version.  Returns what fdp_dp_create() returns. */
FDP_API int fdp_dp_create_pipeline(struct fdp_pipeline *pipeline,
                                   const struct fdp_dp_options *options,
                                   struct fdp_dp **dpp);

/* Destroys 'dp': closes its ports (flushing tx captures).  No pmd of it
 * may be polling.  Accepts NULL. */
FDP_API void fdp_dp_destroy(struct fdp_dp *dp);

/* ---- Ports ---- */

/* Adds port 'port_no' (1..0xfeff) with back end 'spec' (see above).
 * Returns 0; EINVAL for a bad number or spec; EEXIST if the number is
 * taken, or a tunnel's UDP port is another kind's (or VXLAN's with the
 * other exts=gbp setting); ENOSPC for a ninth tunnel (kind, UDP port); an errno from opening a file or an interface (see above);
 * ENOMEM.  On failure, if 'errorp' is nonnull, '*errorp' gets a message
 * naming what was wrong, which the caller frees. */
FDP_API int fdp_dp_port_add(struct fdp_dp *dp, uint32_t port_no,
                            const char *spec, char **errorp);

/* Removes port 'port_no', after every pmd has stopped using it; a pcap tx
 * capture is complete when this returns.  Returns 0 or ENOENT. */
FDP_API int fdp_dp_port_del(struct fdp_dp *dp, uint32_t port_no);

/* Fills 'port_nos' with up to 'max' port numbers in increasing order and
 * returns how many ports there are. */
FDP_API size_t fdp_dp_port_list(struct fdp_dp *dp, uint32_t *port_nos,
                                size_t max);

struct fdp_port_stats {
    uint64_t rx_packets, rx_bytes;
    uint64_t rx_dropped;        /* Received, then sent nowhere: no flow,
                                 * drop actions, TTL expired. */
    uint64_t rx_errors;         /* Unreadable: too big for a frame,
                                 * capture errors; for live ports also
                                 * what the kernel dropped before the
                                 * port could take it (a full ring). */
    uint64_t tx_packets, tx_bytes;
    uint64_t tx_dropped;        /* Not sent: ring full, no free frame. */
};

/* Statistics and back-end spec of port 'port_no'.  The spec string is
 * the port's own and lives as long as the port.  Returns 0 or ENOENT. */
FDP_API int fdp_dp_port_get_stats(struct fdp_dp *dp, uint32_t port_no,
                                  struct fdp_port_stats *stats,
                                  const char **specp);

/* The last error of port 'port_no''s back end (a capture that could not
 * be read or written, a descriptor the peer got wrong), or "" if none:
 * copied into 'buf' of 'size' bytes.  Returns 0 or ENOENT. */
FDP_API int fdp_dp_port_get_error(struct fdp_dp *dp, uint32_t port_no,
                                  char *buf, size_t size);

/* What port 'port_no''s back end set up, in a few words, or "" if it
 * has nothing to say: for an afxdp port, the XDP program on the interface
 * and its mode, and whether the socket is in copy or zero-copy mode
 * ("XDP program xsk_def_prog (id 42), native mode; copy").  Copied into
 * 'buf' of 'size' bytes.  Returns 0 or ENOENT. */
FDP_API int fdp_dp_port_describe(struct fdp_dp *dp, uint32_t port_no,
                                 char *buf, size_t size);

/* The rings a ring port's peer drives, and the buffer area. */
struct fdp_port_rings {
    void *umem;                 /* Frame area: descriptor addrs are
                                 * offsets in it. */
    uint64_t umem_size;
    uint32_t frame_size;
    struct fdp_ring *fill;      /* Free frames for the peer to fill. */
    struct fdp_ring *rx;        /* Packets from the peer. */
    struct fdp_ring *tx;        /* Packets for the peer. */
    struct fdp_ring *completion;    /* Frames the peer is done with. */
};

/* Fills 'rings' for ring port 'port_no'.  Returns 0, ENOENT, or EINVAL if
 * the port is not a ring port.  The rings live as long as the port. */
FDP_API int fdp_dp_port_rings(struct fdp_dp *dp, uint32_t port_no,
                              struct fdp_port_rings *rings);

/* ---- Tunnels ---- */

/* Tunnel ports (types vxlan, geneve and gre, with Open vSwitch's options:
 * remote_ip=IP|flow, local_ip=IP|flow, key=N|flow, in_key, out_key,
 * dst_port, tos=N|inherit, ttl=N|inherit, df_default, csum, and exts=gbp
 * for VXLAN) send what is output to them encapsulated out of the underlay
 * port their route names, and receive the tunnel packets that arrive on
 * any port for a local address.  This explains in words, into 'buf' of
 * 'size' bytes, the outer header that output to tunnel port 'port_no'
 * gives a packet whose key is 'key' at that output ("native tunnel push
 * to vxlan port 10: eth(...),ipv4(...),udp(...),vxlan(vni=0x5)
 * out_port(1)"), or why it would be dropped.  Returns 0, ENOENT (no such
 * port) or EINVAL (not a tunnel port).  Any thread. */
FDP_API int fdp_dp_tunnel_explain(struct fdp_dp *dp, uint32_t port_no,
                                  const struct fdp_key *key, char *buf,
                                  size_t size);

/* ---- Upcalls ---- */

enum fdp_upcall_reason {
    FDP_UPCALL_MISS,            /* No flow matched. */
    FDP_UPCALL_ACTION,          /* The controller action. */
};

struct fdp_upcall {
    enum fdp_upcall_reason reason;
    uint32_t in_port;
    const void *data;           /* The packet (at most max_len bytes for */
    size_t size;                /* the controller action). */
    const struct fdp_key *key;  /* As extracted on arrival, with (for the
                                 * controller action) the metadata and
                                 * registers the pipeline had at the
                                 * action and the ct fields the tracker
                                 * gave. */
    /* FDP_UPCALL_ACTION: the controller action's arguments, as Open
     * vSwitch's controller(reason=...,id=...,userdata=...,pause,
     * meter_id=...) gives them to its packet-in (zero, no userdata and
     * reason 1, "action", for plain controller or controller:N). */
    uint8_t ofp_reason;         /* OpenFlow packet-in reason: 0 no_match,
                                 * 1 action, 2 invalid_ttl, 3 action_set,
                                 * 4 group, 5 packet_out, 6 explicit miss
                                 * (a controller action of a table-miss
                                 * flow: no_match since OpenFlow 1.3,
                                 * action before). */
    uint8_t table_id;           /* The table of the flow that sent it (0
                                 * for a miss); */
    uint64_t cookie;            /* and its cookie (all-ones for none: a
                                 * miss, a packet-out's own actions). */
    bool pause;                 /* The controller resumes the pipeline
                                 * (Open vSwitch's continuations); flowdp
                                 * delivers the flag only. */
    uint16_t controller_id;     /* Which controller connection: 0 all. */
    uint32_t meter_id;          /* 0: none; else the packet passed that
                                 * meter (one it dropped is no upcall). */
    const void *userdata;       /* 'userdata_size' bytes, or NULL. */
    size_t userdata_size;
};

/* Called on a pmd thread, in an RCU read-side section, for each packet
 * that misses the table (which the datapath then drops) or meets a
 * controller action.  The callback must copy what it keeps and must not
 * block; it may change the table.  Without a callback, misses are
 * dropped and counted. */
typedef void fdp_dp_upcall_cb(void *aux, const struct fdp_upcall *upcall);

FDP_API void fdp_dp_set_upcall(struct fdp_dp *dp, fdp_dp_upcall_cb *cb,
                               void *aux);

/* ---- Poll-mode threads ---- */

/* Creates pmd number 'id' (0 .. n_pmds - 1) of 'dp'; it polls the rx of
 * every port whose position in order of addition is 'id' modulo n_pmds.
 * Returns 0, EINVAL or ENOMEM. */
FDP_API int fdp_dp_pmd_create(struct fdp_dp *dp, unsigned int id,
                              struct fdp_dp_pmd **pmdp);

/* Destroys 'pmd' (not polling any more); its counters stay in the
 * datapath's statistics.  Accepts NULL. */
FDP_API void fdp_dp_pmd_destroy(struct fdp_dp_pmd *pmd);

/* Polls each of the pmd's ports once: receives up to FDP_DP_BATCH
 * packets per port, forwards them, transmits, recycles completed frames.
 * Returns the number of packets received; sets '*exhausted' (if nonnull)
 * to true if every rx port it polls is at its end (a capture read to the
 * end) and there was nothing to do. */
FDP_API size_t fdp_dp_pmd_poll(struct fdp_dp_pmd *pmd, bool *exhausted);

struct fdp_dp_stats {
    uint64_t n_packets;         /* Received on all ports. */
    uint64_t n_emc_hits;        /* Found in an exact-match cache. */
    uint64_t n_smc_hits;        /* Found in a signature match cache. */
    uint64_t n_table_hits;      /* Found by a table lookup. */
    uint64_t n_missed;          /* No flow. */
    uint64_t n_upcalls;         /* Given to the upcall callback. */
    uint64_t n_ttl_expired;     /* Dropped by dec_ttl. */
    uint64_t n_no_room;         /* Dropped: no headroom for a tag. */
    uint64_t n_frames_free;     /* Frames in the free pool now. */
    uint64_t n_emc_bypassed;    /* Classified without the exact-match
                                 * cache, which auto mode found did not
                                 * pay. */
    /* Connection tracking (the ct action) and recirculation (ct with
     * table=N: the packet, or a copy, continues in table N). */
    uint64_t n_ct_packets;      /* Packets through the tracker. */
    uint64_t n_recirculations;  /* Continuations started. */
    uint64_t n_recirc_cache_hits;   /* Continuations classified by the
                                     * continuation cache. */
    uint64_t n_recirc_missed;   /* Continuations that hit no flow (given
                                 * to the upcall, as misses are). */
    uint64_t n_recirc_dropped;  /* Continuations lost: past the depth
                                 * limit (6 recirculations, as Open
                                 * vSwitch), or no free frame for a
                                 * fork's copy. */
    uint64_t n_ct_table_ignored;    /* ct(table=N) in a bare table's flow,
                                     * which has no table N: run as ct
                                     * without table. */
    uint64_t n_packet_outs;     /* Run (fdp_dp_packet_out()). */
    uint64_t n_packet_outs_dropped; /* Refused for a full queue, or lost
                                     * for want of a frame or memory. */
};

FDP_API void fdp_dp_get_stats(struct fdp_dp *dp, struct fdp_dp_stats *stats);

/* Packet-out (OpenFlow's OFPT_PACKET_OUT): runs 'actions' once on a copy
 * of the 'len'-byte frame 'frame' as if it had arrived on 'in_port' (a
 * port number, or the reserved CONTROLLER 0xfffd, LOCAL 0xfffe or NONE
 * 0xffff): the pipeline's actions compose as a flow's in table 0 would
 * (resubmit looks its table up and counts the flows it hits, group runs
 * its buckets, ct(table=N) continues in table N), output:IN_PORT goes to
 * 'in_port', NORMAL learns nothing from a port that is not one.  No port
 * counts it as received.  The packet is queued (256 at most) and run by
 * the next pmd to poll (fdp_dp_pmd_poll()), so a datapath whose pmds are
 * not polled runs none.  Any thread; 'frame' and 'actions' are copied.
 * 'state', if nonnull, gives the pipeline state the packet starts with
 * (OpenFlow 1.5's packet-out match): its metadata, registers, ct and
 * tunnel fields and pkt_mark (its other words are the packet's and are
 * not read); NULL starts them zero, as for a received packet.
 * Returns 0; EINVAL for an empty frame, an 'in_port' above 0xffff, or
 * pipeline actions (resubmit, group, learn) for a bare table's datapath;
 * EMSGSIZE for a frame larger than a frame less its headroom; ENOBUFS if
 * the queue is full; ENOMEM. */
FDP_API int fdp_dp_packet_out(struct fdp_dp *dp, const void *frame,
                              size_t len, uint32_t in_port,
                              const struct fdp_key *state,
                              const struct fdp_actions *actions);

/* ---- Fragment reassembly before connection tracking ----
 *
 * IP fragments that reach a ct action are held until their whole packet
 * has arrived, which then goes through the tracker, and are sent on with
 * its result (Open vSwitch's ipf: datapath/ipf.c).  These are Open
 * vSwitch's ovs-appctl dpctl/ipf-* controls.  Any thread, concurrently
 * with the pmds. */

/* The settings and counters of one address family. */
struct fdp_dp_ipf_proto_status {
    bool enabled;
    uint32_t min_frag_size;     /* Bytes, IP header included, that every
                                 * fragment but the last must have. */
    uint64_t n_accepted;        /* Fragments held. */
    uint64_t n_completed;       /* Sent on after their packet completed. */
    uint64_t n_expired;         /* Freed with an incomplete packet after
                                 * its 15 s. */
    uint64_t n_too_small;       /* Refused (+inv): under the minimum. */
    uint64_t n_overlap;         /* Refused (+inv): overlapping. */
    uint64_t n_purged;          /* Dropped after reassembly, unsent. */
};

struct fdp_dp_ipf_status {
    struct fdp_dp_ipf_proto_status v4, v6;
    uint32_t nfrag;             /* Fragments held now. */
    uint32_t nfrag_max;         /* The most that may be held. */
};

/* Reassembly of IPv4 ('ipv6' false) or IPv6 fragments on or off (both on
 * by default).  Off, fragments reach the tracker alone and are +inv. */
FDP_API void fdp_dp_ipf_set_enabled(struct fdp_dp *dp, bool ipv6,
                                    bool enabled);

/* The minimum fragment size (defaults 1200 for IPv4, 1280 for IPv6).
 * Returns 0, or EINVAL under 400. */
FDP_API int fdp_dp_ipf_set_min_frag(struct fdp_dp *dp, bool ipv6,
                                    uint32_t size);

/* The most fragments held at once (default 1000).  Returns 0, or EINVAL
 * above 5000. */
FDP_API int fdp_dp_ipf_set_max_nfrags(struct fdp_dp *dp, uint32_t n);

FDP_API void fdp_dp_ipf_get_status(struct fdp_dp *dp,
                                   struct fdp_dp_ipf_status *status);
/* ---- Connection tracking: control ----
 *
 * The datapath's connection tracker (the one behind the ct action), as
 * Open vSwitch's "ovs-appctl dpctl/..." conntrack commands see theirs:
 * dump, flush, counts, counters, the total limit (maxconns), limits per
 * zone, timeouts per zone, TCP sequence checking.  The format functions
 * write what dpctl prints.
 *
 * Thread-safety: every function here may be called from any thread,
 * concurrently with the pmds (which never wait for it) and with each
 * other; fdp_dp_ct_stats() takes the datapath's mutex to walk its pmds.
 * fdp_dp_ct_flush() waits for RCU grace periods: do not call it inside an
 * RCU read-side section (fdp_table_read_lock()). */

/* One direction of a connection.  IPv4 addresses are in the low 32 bits
 * of 'src.lo' and 'dst.lo' (host order).  ICMP and ICMPv6 connections
 * have 'icmp_id', 'icmp_type' and 'icmp_code' (the type and code of the
 * message this direction sends) and no ports; TCP, UDP and SCTP ports and
 * no ICMP fields; other protocols neither. */
struct fdp_ct_tuple {
    bool ipv6;
    uint8_t proto;              /* IP protocol number. */
    struct fdp_value src, dst;
    uint16_t src_port, dst_port;
    uint16_t icmp_id;
    uint8_t icmp_type, icmp_code;
};

/* pf's TCP states, Open vSwitch's CT_DPIF_TCPS_*, as dumps print them. */
enum fdp_ct_tcp_state {
    FDP_CT_TCPS_CLOSED, FDP_CT_TCPS_LISTEN, FDP_CT_TCPS_SYN_SENT,
    FDP_CT_TCPS_SYN_RECV, FDP_CT_TCPS_ESTABLISHED, FDP_CT_TCPS_CLOSE_WAIT,
    FDP_CT_TCPS_FIN_WAIT_1, FDP_CT_TCPS_CLOSING, FDP_CT_TCPS_LAST_ACK,
    FDP_CT_TCPS_FIN_WAIT_2, FDP_CT_TCPS_TIME_WAIT,
    FDP_CT_N_TCPS
};

/* A connection.  'reply' is the tuple its answers carry: the reverse of
 * 'orig' without NAT, the translated one with it. */
struct fdp_ct_entry {
    struct fdp_ct_tuple orig, reply;
    uint16_t zone;
    uint32_t mark;
    struct fdp_value label;     /* ct_label, 128 bits. */
    uint32_t timeout;           /* Seconds until it expires. */
    /* TCP only (zero otherwise): each side's pf state, and its window
     * scale (the shift) and flags as Open vSwitch reports them
     * (FDP_CT_TCPF_*). */
    uint8_t tcp_state[2];       /* [0] original side, [1] reply side. */
    uint8_t tcp_wscale[2];
    uint8_t tcp_flags[2];
};
#define FDP_CT_TCPF_WINDOW_SCALE 0x01   /* CT_DPIF_TCPF_WINDOW_SCALE. */
#define FDP_CT_TCPF_BE_LIBERAL 0x08     /* CT_DPIF_TCPF_BE_LIBERAL. */

/* Calls 'cb(entry, aux)' for each live connection (of 'zone' only, if
 * nonnull), in no particular order, until it returns false.  Connections
 * made or removed meanwhile may or may not be seen; none twice.  Never
 * blocks a pmd. */
FDP_API void fdp_dp_ct_dump(struct fdp_dp *dp, const uint16_t *zone,
                            bool (*cb)(const struct fdp_ct_entry *,
                                       void *aux),
                            void *aux);

/* What a flush removes, as "ovs-appctl dpctl/flush-conntrack [zone=N]
 * [ct-orig-tuple [ct-reply-tuple]]" says it (Open vSwitch 3.1's
 * ofp_ct_match): the fields of each tuple that are nonzero must equal the
 * connection's (for ICMP the id, type and code always count); 'ipv6' and
 * 'proto' count when 'has_l3' and 'proto' is nonzero.  An all-zero match
 * is "every connection". */
struct fdp_ct_match {
    bool has_l3;                /* 'ipv6' was given (an address was). */
    bool ipv6;
    uint8_t proto;              /* 0: any. */
    struct fdp_ct_tuple orig, reply;    /* Only the fields above; their
                                         * 'ipv6' and 'proto' are
                                         * ignored. */
};

/* Parses 's', a tuple in ovs-appctl dpctl/flush-conntrack's syntax
 * ("ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=6,ct_tp_src=1234,
 * ct_tp_dst=80"; ct_ipv6_src and ct_ipv6_dst for IPv6; icmp_id,
 * icmp_type and icmp_code once ct_nw_proto names ICMP or ICMPv6) into
 * 'match''s original tuple if 'reply' is false, else its reply tuple,
 * and its 'has_l3', 'ipv6', 'proto' (which both tuples share).  Returns
 * 0, or EINVAL with a message naming the field in '*errorp' (which the
 * caller frees), or ENOMEM. */
FDP_API int fdp_ct_match_parse_tuple(const char *s, bool reply,
                                     struct fdp_ct_match *match,
                                     char **errorp);

/* Removes the connections of 'zone' (of every zone if NULL) that 'match'
 * selects (every one if 'match' is NULL or all zero); with a full
 * original tuple (both addresses and, for protocols with ports, both
 * ports) and no reply tuple, the one connection with that tuple in
 * 'zone', or zone 0 if 'zone' is NULL, as Open vSwitch does.  Puts the
 * number removed in '*n' if nonnull.  Returns 0. */
FDP_API int fdp_dp_ct_flush(struct fdp_dp *dp, const uint16_t *zone,
                            const struct fdp_ct_match *match, uint32_t *n);

/* Connections in the table: all of them, or those of 'zone' (which
 * include, until the sweep removes them, ones that just expired). */
FDP_API uint32_t fdp_dp_ct_count(struct fdp_dp *dp);
FDP_API uint32_t fdp_dp_ct_zone_count(struct fdp_dp *dp, uint16_t zone);

struct fdp_ct_stats {
    uint64_t n_packets;         /* Through the ct action. */
    uint64_t n_created;         /* Connections committed. */
    uint64_t n_invalid;         /* Packets found +inv. */
    uint64_t n_full;            /* Commits refused: a limit, or no room. */
};

/* The tracker's packet counters, summed over the datapath's pmds (those
 * alive now: a destroyed pmd's counters go with it). */
FDP_API void fdp_dp_ct_stats(struct fdp_dp *dp, struct fdp_ct_stats *);

/* The total limit (dpctl/ct-set-maxconns): commits beyond it are refused;
 * lowering it removes nothing.  Returns 0, or EINVAL if 'maxconns' is 0
 * or above the tracker's capacity (fdp_dp_options.ct_capacity, which
 * fdp_dp_ct_get_capacity() gives). */
FDP_API int fdp_dp_ct_set_maxconns(struct fdp_dp *dp, uint32_t maxconns);
FDP_API uint32_t fdp_dp_ct_get_maxconns(struct fdp_dp *dp);
FDP_API uint32_t fdp_dp_ct_get_capacity(struct fdp_dp *dp);

/* Zone limits (dpctl/ct-set-limits): the default for zones without a
 * limit of their own, and zone 'zone''s own; 0 means none (for a zone:
 * the default applies, as dpctl/ct-del-limits).  The getters give what
 * was set (0: none). */
FDP_API void fdp_dp_ct_set_default_limit(struct fdp_dp *dp, uint32_t limit);
FDP_API uint32_t fdp_dp_ct_get_default_limit(struct fdp_dp *dp);
FDP_API void fdp_dp_ct_set_zone_limit(struct fdp_dp *dp, uint16_t zone,
                                      uint32_t limit);
FDP_API uint32_t fdp_dp_ct_get_zone_limit(struct fdp_dp *dp, uint16_t zone);

/* Timeout policy attributes: Open vSwitch's names (its Ct_Timeout_Policy
 * "timeouts" keys) of the timeouts its userspace tracker uses, in
 * seconds.  UDP's also apply to protocols other than TCP and ICMP. */
enum fdp_ct_tp_attr {
    FDP_CT_TP_TCP_SYN_SENT,     /* First packet (30). */
    FDP_CT_TP_TCP_SYN_RECV,     /* Opening (30). */
    FDP_CT_TP_TCP_ESTABLISHED,  /* Established (86400). */
    FDP_CT_TP_TCP_FIN_WAIT,     /* Closing (900). */
    FDP_CT_TP_TCP_TIME_WAIT,    /* FIN wait (45). */
    FDP_CT_TP_TCP_CLOSE,        /* Closed (30). */
    FDP_CT_TP_UDP_FIRST,        /* First packet (60). */
    FDP_CT_TP_UDP_SINGLE,       /* More, one way only (60). */
    FDP_CT_TP_UDP_MULTIPLE,     /* Both ways (30). */
    FDP_CT_TP_ICMP_FIRST,       /* Request (60). */
    FDP_CT_TP_ICMP_REPLY,       /* Answered (30). */
    FDP_CT_N_TP_ATTRS
};

/* "tcp_syn_sent"... for 'attr', or NULL if out of range; and the reverse
 * (case-insensitive, as Open vSwitch), FDP_CT_N_TP_ATTRS if none. */
FDP_API const char *fdp_ct_tp_attr_name(enum fdp_ct_tp_attr attr);
FDP_API enum fdp_ct_tp_attr fdp_ct_tp_attr_from_name(const char *name);

/* Sets timeout 'attr' to 'seconds' (1 to 2147483) for every zone
 * ('zone' NULL: the global value) or for zone '*zone' alone (0 seconds:
 * back to the global value).  Applies to a connection when its timer is
 * next refreshed.  Returns 0, EINVAL ('attr' out of range, 'seconds' too
 * large, or 0 for the global value) or ENOMEM. */
FDP_API int fdp_dp_ct_set_timeout(struct fdp_dp *dp, const uint16_t *zone,
                                  enum fdp_ct_tp_attr attr, uint32_t seconds);

/* The timeout 'attr' has in zone '*zone' (its own if it has one, else the
 * global), or the global one if 'zone' is NULL; '*own' (if nonnull) says
 * whether it is the zone's own.  0 if 'attr' is out of range. */
FDP_API uint32_t fdp_dp_ct_get_timeout(struct fdp_dp *dp,
                                       const uint16_t *zone,
                                       enum fdp_ct_tp_attr attr, bool *own);

/* TCP sequence checking (dpctl/ct-enable-tcp-seq-chk), on by default:
 * off, out-of-window segments are not +inv. */
FDP_API void fdp_dp_ct_set_tcp_seq_chk(struct fdp_dp *dp, bool on);
FDP_API bool fdp_dp_ct_get_tcp_seq_chk(struct fdp_dp *dp);

/* Formats 'entry' as "ovs-appctl dpctl/dump-conntrack" prints it: with
 * FDP_CT_FORMAT_VERBOSE as with -m (id, status, both TCP states, window
 * scales and flags), with FDP_CT_FORMAT_STATS as with -s (the timeout).
 * Returns a string the caller frees, or NULL when out of memory. */
#define FDP_CT_FORMAT_VERBOSE 0x1
#define FDP_CT_FORMAT_STATS 0x2
FDP_API char *fdp_ct_entry_format(const struct fdp_ct_entry *entry,
                                  unsigned int flags);

/* The name dpctl gives TCP state 'state' ("ESTABLISHED"), or NULL; and
 * the state a non-verbose dump and ct-stats-show print for a connection
 * whose sides are in 'orig' and 'reply' (the larger of the two, with
 * FIN_WAIT_2 shown as TIME_WAIT and SYN_RECV as ESTABLISHED, as Open
 * vSwitch coalesces them). */
FDP_API const char *fdp_ct_tcp_state_name(unsigned int state);
FDP_API unsigned int fdp_ct_tcp_state_coalesce(uint8_t orig, uint8_t reply);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_DATAPATH_H */
