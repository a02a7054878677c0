/*
 * NORMAL, FLOOD, ALL and LOCAL: the datapath's learning switch (internal
 * to the datapath).  The theory of operation is at the top of
 * datapath/normal.c; the user's view is flowdp/normal.h.
 *
 * Thread-safety: fdp__normal_decide() and fdp__normal_execute() run on
 * pmds (and the decision on control threads, for traces) inside an RCU
 * read-side section, without locks; the rest are control functions,
 * called with the datapath's mutex held.  A port's old VLAN
 * configuration is freed after a grace period (fdp__rcu_synchronize()
 * in fdp_dp_port_set_vlan()).
 */
#ifndef FDP_NORMAL_H
#define FDP_NORMAL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/normal.h>

struct fdp__fdb;
struct fdp__pkt;
struct fdp__port;

/* A port's VLAN configuration as the packet path reads it: the user's
 * settings and what they mean, immutable once published (a port's
 * 'vlan' pointer, replaced under RCU). */
struct fdp__vlan_conf {
    struct fdp_port_vlan cfg;   /* As given, for get and show. */
    enum fdp_vlan_mode mode;    /* The mode that applies. */
    uint16_t tag;               /* The access or native VLAN. */
    uint64_t vlans[4096 / 64];  /* The VLANs the port carries (Open
                                 * vSwitch's xbundle_includes_vlan()). */
};

/* The datapath's switch: its learning table and counters. */
struct fdp__normal;

int fdp__normal_create(struct fdp__normal **);
void fdp__normal_destroy(struct fdp__normal *);
struct fdp__fdb *fdp__normal_fdb(const struct fdp__normal *);

/* Makes the packet-path form of 'cfg' (NULL if out of memory). */
struct fdp__vlan_conf *fdp__vlan_conf_create(const struct fdp_port_vlan *);

/* What NORMAL does with one packet. */
enum fdp__normal_action {
    FDP__NORMAL_DROP,           /* 'why' says why. */
    FDP__NORMAL_FORWARD,        /* To 'port'. */
    FDP__NORMAL_FLOOD,          /* To every other port of 'vlan'. */
};

enum fdp__normal_learn {
    FDP__NORMAL_NOT_LEARNED,    /* Dropped first, or a multicast source. */
    FDP__NORMAL_KNOWN,          /* Already on this port: refreshed. */
    FDP__NORMAL_LEARNED,        /* New, or moved here: noted. */
};

struct fdp__normal_verdict {
    enum fdp__normal_action action;
    enum fdp__normal_learn learn;
    uint16_t vlan;              /* The frame's VLAN in the switch. */
    uint32_t port;              /* FDP__NORMAL_FORWARD: where to. */
    const char *why;            /* FDP__NORMAL_DROP: a phrase. */
};

/* Decides what NORMAL does with the frame whose Ethernet header is at
 * 'eth' (destination, source, then an outer tag of TCI 'tci' if
 * 'tagged'), arriving on port 'in' (NULL if no such port) numbered
 * 'in_no', at fdb time 'now'.  With 'learn' it also learns the source
 * (fdp__fdb_learn()); a trace passes false and is told what would be
 * learned. */
void fdp__normal_decide(struct fdp__normal *, const uint8_t eth[12],
                        bool tagged, uint16_t tci,
                        const struct fdp__port *in, uint32_t in_no,
                        uint32_t now, bool learn,
                        struct fdp__normal_verdict *);

/* Prefetches the learning table's lines that NORMAL will read for 'pkt'
 * arriving on 'in' (a group's packets first, then their executions: the
 * lookups' misses overlap). */
void fdp__normal_prefetch(struct fdp__normal *, const struct fdp__port *in,
                          const struct fdp__pkt *pkt);

/* The output callback of fdp__normal_execute(): the datapath's output
 * (execute.h's contract for 'steal'). */
typedef void fdp__normal_output_fn(void *aux, struct fdp__pkt *pkt,
                                   uint32_t port, bool steal);

/* Runs output action 'reserved' (FDP_PORT_NORMAL, _FLOOD, _ALL or
 * _LOCAL) on 'pkt' for the input port 'in_no', over the 'n_ports' ports
 * 'ports' (sorted by number), through 'output'.  With 'steal' the last
 * output takes the packet; returns whether one did (else the packet is
 * still the caller's).  Without 'steal', the packet's VLAN tag is what it
 * was on return, as Open vSwitch restores the flow's VLANs after
 * NORMAL's outputs. */
bool fdp__normal_execute(struct fdp__normal *, struct fdp__port *const *ports,
                         size_t n_ports, struct fdp__pkt *pkt,
                         uint32_t reserved, uint32_t in_no, bool steal,
                         fdp__normal_output_fn *output, void *aux);

/* Writes a trace's account of 'v' ("learned 50:54:00:00:00:01 on port 1
 * VLAN 0; forwarded to port 2") into 'buf' of 'size' bytes. */
void fdp__normal_verdict_format(const struct fdp__normal_verdict *v,
                                const uint8_t eth[12], uint32_t in_no,
                                char *buf, size_t size);

#endif /* FDP_NORMAL_H */
