/*
 * flowdp: the NORMAL action's switch, its ports' VLANs and its MAC
 * learning table, as Open vSwitch 3.1 has them (ofproto-dpif-xlate's
 * xlate_normal(), lib/mac-learning.c, vswitchd's Port vlan_mode, tag and
 * trunks).
 *
 * A datapath is one learning switch: NORMAL learns each frame's source
 * MAC per VLAN on the port it came in on, sends a frame to the port its
 * destination was last seen on, and floods broadcast, multicast and
 * unknown unicast frames to every other port of the frame's VLAN.  A
 * port's VLAN mode decides which VLAN an arriving frame belongs to and
 * how a frame leaves (datapath/normal.c has the rules, Open vSwitch's).
 *
 * The reserved ports as output actions: FLOOD and ALL send the packet as
 * it is to every port but the input port (flowdp has no per-port
 * no-flood setting, so they are the same); LOCAL is the bridge's own
 * port in Open vSwitch, which flowdp does not have: output to LOCAL drops
 * the packet and counts it (n_local_dropped).  IN_PORT sends it back.
 *
 * Thread-safety: every function here is a control function (any thread,
 * serialised on the datapath's mutex where it changes the datapath).
 */
#ifndef FLOWDP_NORMAL_H
#define FLOWDP_NORMAL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_dp;

/* A port's VLAN mode (Open vSwitch's Port vlan_mode). */
enum fdp_vlan_mode {
    FDP_VLAN_MODE_TRUNK,            /* Every VLAN of 'trunks', tagged. */
    FDP_VLAN_MODE_ACCESS,           /* VLAN 'tag' only, untagged. */
    FDP_VLAN_MODE_NATIVE_TAGGED,    /* 'tag' for untagged frames in;
                                     * every VLAN tagged out. */
    FDP_VLAN_MODE_NATIVE_UNTAGGED,  /* 'tag' for untagged frames in, and
                                     * its frames leave untagged. */
};

/* A port's VLAN configuration as the user gave it.  As in vswitchd, a
 * mode not given is access if a tag is, else trunk; a port with no
 * trunks list trunks every VLAN; a mode that needs a tag and has none
 * uses VLAN 0. */
struct fdp_port_vlan {
    bool mode_set;                  /* vlan_mode given. */
    enum fdp_vlan_mode mode;
    int tag;                        /* 0..4095, or -1: none. */
    bool has_trunks;                /* false: every VLAN. */
    uint64_t trunks[4096 / 64];     /* Bit V set: VLAN V. */
};

/* The configuration of a port nobody configured: trunk, every VLAN. */
FDP_API void fdp_port_vlan_init(struct fdp_port_vlan *);

/* Applies one setting "vlan_mode=trunk|access|native-tagged|
 * native-untagged", "tag=N", "trunks=N[,N...]" (ranges N-M too), or with
 * an empty value ("tag=") clears it, to 'cfg'.  Returns 0, or EINVAL with
 * '*errorp' (freed by the caller) naming what is wrong. */
FDP_API int fdp_port_vlan_parse(struct fdp_port_vlan *cfg, const char *word,
                                char **errorp);

/* The mode that applies (the given one, or the implied one). */
FDP_API enum fdp_vlan_mode fdp_port_vlan_mode(const struct fdp_port_vlan *);

/* Writes 'cfg' as "vlan_mode=access tag=10" (only what is set, the mode
 * always) into 'buf' of 'size' bytes. */
FDP_API void fdp_port_vlan_format(const struct fdp_port_vlan *cfg,
                                  char *buf, size_t size);

/* fdp_dp_port_add() with the port's VLAN configuration 'cfg' in place
 * before any packet arrives on it.  Returns what fdp_dp_port_add() does,
 * or ENOMEM. */
FDP_API int fdp_dp_port_add_vlan(struct fdp_dp *, uint32_t port_no,
                                 const char *spec,
                                 const struct fdp_port_vlan *cfg,
                                 char **errorp);

/* Sets or reads port 'port_no''s VLAN configuration.  Setting it forgets
 * what the port learned (as vswitchd does when a port is reconfigured).
 * Returns 0, ENOENT (no such port) or ENOMEM. */
FDP_API int fdp_dp_port_set_vlan(struct fdp_dp *, uint32_t port_no,
                                 const struct fdp_port_vlan *cfg);
FDP_API int fdp_dp_port_get_vlan(struct fdp_dp *, uint32_t port_no,
                                 struct fdp_port_vlan *cfg);

/* One entry of the MAC learning table. */
struct fdp_fdb_entry {
    uint32_t port;
    uint16_t vlan;
    uint8_t mac[6];
    uint32_t age;                   /* Seconds since last seen. */
};

/* Copies up to 'max' entries, least recently seen first (the order of
 * Open vSwitch's fdb/show), into 'entries'.  Returns the number of
 * entries in the table (may exceed 'max'). */
FDP_API size_t fdp_dp_fdb_dump(struct fdp_dp *, struct fdp_fdb_entry *entries,
                               size_t max);

/* Applies now every learning note the pmds have queued (the learning
 * table's thread does it within a millisecond otherwise): for replays
 * that must learn from each packet before the next, as Open vSwitch's
 * upcalls do. */
FDP_API void fdp_dp_fdb_sync(struct fdp_dp *);

/* Forgets every learned entry. */
FDP_API void fdp_dp_fdb_flush(struct fdp_dp *);

/* Open vSwitch's other_config:mac-table-size (default 8192, 16 to
 * 4194304) and mac-aging-time (seconds, default 300, 1 to 86400).
 * Returns 0, EINVAL or ENOMEM. */
FDP_API int fdp_dp_fdb_set_size(struct fdp_dp *, uint32_t max_entries);
FDP_API int fdp_dp_fdb_set_aging(struct fdp_dp *, uint32_t seconds);

/* Moves the learning table's clock 'seconds' ahead (Open vSwitch's
 * time/warp, for tests of aging) and ages the table at once. */
FDP_API void fdp_dp_fdb_warp(struct fdp_dp *, uint32_t seconds);

struct fdp_key;

/* What NORMAL would do with the packet 'key' (its in_port, dl_dst, dl_src
 * and vlan_tci) now, without learning: "learned 50:54:00:00:00:01 on
 * port 1 VLAN 0; 50:54:00:00:00:02 learned on port 2: forwarded", for a
 * trace.  Written into 'buf' of 'size' bytes. */
FDP_API void fdp_dp_normal_explain(struct fdp_dp *, const struct fdp_key *key,
                                   char *buf, size_t size);

struct fdp_fdb_stats {
    uint64_t n_entries, max_entries;
    uint32_t aging;
    uint64_t n_learned, n_moved, n_expired, n_evicted;
    uint64_t n_notes_dropped;       /* Learning notes a full queue lost. */
    uint64_t n_local_dropped;       /* Packets output to LOCAL. */
};

FDP_API void fdp_dp_fdb_get_stats(struct fdp_dp *, struct fdp_fdb_stats *);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_NORMAL_H */
