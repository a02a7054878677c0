/* What a live port does for packets the kernel handed over with work left
 * for "the hardware": partial checksums and GSO super-packets.  See
 * port-offload.c's opening comment. */
#ifndef FDP_PORT_OFFLOAD_H
#define FDP_PORT_OFFLOAD_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_net.h>

/* Linux 6.2 added UDP segmentation offload to the uapi header; older
 * headers (Debian 12's 6.1) lack the name but the kernel may still be
 * newer. */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

/* Completes the partial checksum of the 'len'-byte packet 'pkt' as a NIC
 * would: the one's-complement sum of the bytes from 'csum_start' to the
 * end, complemented, stored big-endian at 'csum_start' + 'csum_offset'
 * (0 stored as 0xffff, the same in one's complement and what UDP needs).
 * The field itself already holds the pseudo-header sum the sender left
 * there.  Returns 0, or EINVAL (the packet untouched) if the field does
 * not lie within the packet. */
int fdp__csum_complete(uint8_t *pkt, size_t len, size_t csum_start,
                       size_t csum_offset);

/* For a packet that came with no word about its checksum (AF_XDP): if
 * 'pkt' ('len' bytes, Ethernet) is an unfragmented IPv4 or IPv6 (no
 * extension headers) TCP or UDP packet whose L4 checksum field holds
 * exactly the pseudo-header sum a sender with checksum offload leaves
 * there, and the checksum does not verify, completes it and returns true.
 * Every other packet is left as it is (false): a checksum that verifies
 * is never touched. */
bool fdp__csum_complete_guess(uint8_t *pkt, size_t len);

/* A GSO packet being cut into segments. */
struct fdp__gso {
    const uint8_t *pkt;         /* The super-packet (not owned). */
    size_t len;
    size_t l3, l4;              /* Offsets of the IP and L4 headers. */
    size_t hdr_len;             /* Ethernet to the end of the L4 header. */
    size_t mss;                 /* Payload bytes per segment. */
    uint32_t n_segs;
    uint8_t proto;              /* IPPROTO_TCP or IPPROTO_UDP. */
    bool ipv6;
};

/* Prepares to cut the 'len'-byte Ethernet packet 'pkt', which the kernel
 * described with 'vh' (gso_type not VIRTIO_NET_HDR_GSO_NONE), into
 * segments of at most 'max_seg' bytes.  The headers are read from the
 * packet itself (the L4 header at csum_start); 'vh''s hdr_len is not
 * trusted.  Returns 0, EOPNOTSUPP for a GSO type other than TCP over IPv4
 * or IPv6 and UDP_L4 (UFO, IP fragmentation, is refused), or EINVAL for
 * headers that do not add up (with '*whyp' saying which, a constant
 * string). */
int fdp__gso_init(struct fdp__gso *, const uint8_t *pkt, size_t len,
                  const struct virtio_net_hdr *vh, size_t max_seg,
                  const char **whyp);

/* Writes segment 'i' (0 <= i < n_segs) to 'dst', which has room for
 * 'max_seg' bytes given to fdp__gso_init(): the headers with lengths, the
 * IPv4 ID, the TCP sequence number and flags (FIN and PSH on the last
 * segment only, CWR on the first only) adjusted as the kernel's software
 * GSO does, and complete checksums.  Returns its length. */
size_t fdp__gso_segment(const struct fdp__gso *, uint32_t i, uint8_t *dst);

#endif /* FDP_PORT_OFFLOAD_H */
