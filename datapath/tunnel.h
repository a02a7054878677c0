/*
 * Tunnel ports: VXLAN, Geneve and GRE with native encapsulation
 * (internal to the datapath).  The theory of operation is at the top of
 * datapath/port-tunnel.c; the header formats are datapath/tnl-header.c's.
 */
#ifndef FDP_TUNNEL_H
#define FDP_TUNNEL_H 1

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/key.h>

#include "datapath/tnl-header.h"

struct fdp__ds;
struct fdp_dp;
struct fdp__pkt;
struct fdp__port;

/* ---- Configuration ---- */

/* A tunnel port's options, as Open vSwitch's netdev_tunnel_config. */
struct fdp__tnl_cfg {
    enum fdp__tnl_kind kind;
    struct in6_addr remote;     /* remote_ip, unless remote_flow. */
    struct in6_addr local;      /* local_ip, if local_set. */
    bool remote_flow;           /* remote_ip=flow: tun_dst says. */
    bool local_flow;            /* local_ip=flow: tun_src says. */
    bool local_set;             /* local_ip=IP given. */
    uint64_t in_key, out_key;   /* Fixed keys (0 if not given). */
    bool in_key_flow, out_key_flow;     /* key=flow. */
    bool out_key_present;       /* A key goes out (GRE: K bit). */
    uint16_t dst_port;          /* UDP destination (0 for GRE). */
    uint8_t tos, ttl;
    bool tos_inherit, ttl_inherit;
    bool df;                    /* df_default (true unless false). */
    bool csum;
    bool gbp;                   /* VXLAN exts=gbp. */
};

/* Parses the options 'args' (the text after "vxlan:", "geneve:" or
 * "gre:", NULL for none) of a tunnel of 'kind' into 'cfg'.  Returns 0, or
 * EINVAL with '*errorp' naming the bad option (as Open vSwitch's
 * set_tunnel_config(): remote_ip is required, local_ip=flow needs
 * remote_ip=flow, both addresses one family, multicast remote refused,
 * tos a DSCP value or inherit, ttl 1..255 or inherit, keys 24 bits for
 * VXLAN and Geneve, 32 for GRE), or ENOMEM. */
int fdp__tnl_cfg_parse(enum fdp__tnl_kind kind, const char *args,
                       struct fdp__tnl_cfg *cfg, char **errorp);

/* Appends 'cfg' as Open vSwitch's "ovs-vsctl show" lists a tunnel's
 * options: {key=flow, remote_ip="10.0.0.2"}, defaults left out. */
void fdp__tnl_cfg_format(const struct fdp__tnl_cfg *cfg, struct fdp__ds *out);

/* ---- Tunnel metadata in the flow key ---- */

/* The tun_* fields of 'key' into 'md' (zero where the key has none). */
void fdp__tnl_md_from_key(const struct fdp_key *key, struct fdp__tnl_md *md);

/* Writes 'md' into the tun_* fields of 'key' (the tunnel words; the other
 * words untouched). */
void fdp__tnl_md_to_key(const struct fdp__tnl_md *md, struct fdp_key *key);

/* ---- Receive ---- */

/* The tunnel ports of a port set, for the receive path: built when the
 * set is published (datapath/dp.c), read by the pmds under RCU. */
struct fdp__tnl_rx_set;

/* The most distinct (kind, UDP port) pairs the tunnel ports of one
 * datapath may have: the receive path compares a packet's with each. */
#define FDP__TNL_MAX_ENDPOINTS 8

/* Builds the receive set of the 'n' ports 'ports'; '*setp' is NULL if
 * none of them is a tunnel port.  Returns 0; ENOSPC (more than
 * FDP__TNL_MAX_ENDPOINTS endpoints) or EEXIST (a UDP port taken by two
 * kinds, or by VXLAN with and without exts=gbp, which Open vSwitch
 * refuses too), with '*errorp' saying which port and why; or ENOMEM. */
int fdp__tnl_rx_set_create(struct fdp__port *const *ports, size_t n,
                           struct fdp__tnl_rx_set **setp, char **errorp);
void fdp__tnl_rx_set_destroy(struct fdp__tnl_rx_set *);

enum fdp__tnl_rx {
    FDP__TNL_RX_NOT,            /* Not a tunnel packet: untouched. */
    FDP__TNL_RX_DECAP,          /* Popped: now received on a tunnel. */
    FDP__TNL_RX_DROP,           /* A bad tunnel packet, counted: the
                                 * caller frees the frame. */
};

/* Looks at the packet 'pkt' just extracted (its key and layout), and if
 * it is a tunnel packet for one of the ports of 'set' (IPv4 or IPv6 UDP
 * to a tunnel's dst_port, or GRE, to a local address of 'dp', from a
 * remote the port takes), pops its outer headers in place, re-extracts
 * it as received on the tunnel port (key and layout; '*hash' the new
 * key's hash with 'basis', as fdp__packet_extract_hash() gives it), fills
 * the key's tunnel fields and sets '*portp'.  Pmd thread, in the RCU
 * read-side section that got 'set'. */
enum fdp__tnl_rx fdp__tnl_receive(struct fdp_dp *dp,
                                  const struct fdp__tnl_rx_set *set,
                                  struct fdp__pkt *pkt, uint32_t basis,
                                  uint32_t *hash, struct fdp__port **portp);

/* True if a packet with 'key' may be a tunnel packet for 'set' (NULL:
 * none): its protocol and UDP port are a tunnel's.  The per-packet cost
 * of a datapath with tunnel ports for packets that are not tunnel
 * packets: a few compares on the key. */
bool fdp__tnl_rx_candidate(const struct fdp__tnl_rx_set *set,
                           const struct fdp_key *key);

/* ---- Send ---- */

/* A pmd's cache of prebuilt outer headers. */
struct fdp__tnl_pmd;

struct fdp__tnl_pmd *fdp__tnl_pmd_create(void);
void fdp__tnl_pmd_destroy(struct fdp__tnl_pmd *);

/* Encapsulates 'pkt' for tunnel port 'port': its tunnel metadata from
 * the packet's key and the port's options, the outer header from the
 * pmd's cache (or built now from the underlay's route and neighbour),
 * pushed in front of the packet (moving it within its frame of
 * 'frame_size' bytes if the headroom is short), with the UDP source port
 * from 'hash'.  Returns true with '*out_port' the underlay port to send
 * the packet out of, or false (counted on the port with its reason:
 * nothing to send to, no route, no neighbour yet, no room) and the
 * packet unchanged.  '*tnlp' is the pmd's cache, made on first use. */
bool fdp__tnl_send(struct fdp__port *port, struct fdp__tnl_pmd **tnlp,
                   struct fdp__pkt *pkt, uint32_t frame_size, uint32_t hash,
                   uint32_t *out_port);

/* ---- Counters ---- */

struct fdp__tnl_stats {
    uint64_t n_encap;           /* Packets encapsulated and sent on. */
    uint64_t n_decap;           /* Packets decapsulated. */
    uint64_t drops[FDP__TNL_N_DROPS];
};

/* 'port''s counters, or false if it is not a tunnel port. */
bool fdp__tnl_port_stats(const struct fdp__port *port,
                         struct fdp__tnl_stats *stats);

#endif /* FDP_TUNNEL_H */
