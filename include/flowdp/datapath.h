/*
 * flowdp: the datapath.
 *
 * Packet parsing turns the bytes of an Ethernet frame into a flow key
 * (key.h), as Open vSwitch's flow_extract() does.  The batch pipeline,
 * ports and actions build on it.
 *
 * Thread-safety: fdp_packet_extract() is pure; call it from any thread.
 */
#ifndef FLOWDP_DATAPATH_H
#define FLOWDP_DATAPATH_H 1

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

/* Parses the 'size' bytes at 'data', received on OpenFlow port 'in_port',
 * into 'key' (all other fields zero), and, if 'layout' is nonnull, where
 * each layer starts.  Understands Ethernet II, 802.3 LLC/SNAP, 802.1Q and
 * 802.1ad tags (the outer one goes to vlan_tci, with the CFI bit set to
 * say "tagged"), ARP, IPv4 (options, fragments), IPv6 (hop-by-hop,
 * routing, destination options and fragment headers), TCP, UDP, SCTP,
 * ICMP and ICMPv6.  A truncated or malformed header ends parsing: the key
 * holds the layers before it.  Never reads past 'size' bytes. */
FDP_API void fdp_packet_extract(const void *data, size_t size,
                                uint32_t in_port, struct fdp_key *key,
                                struct fdp_packet_layout *layout);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_DATAPATH_H */
