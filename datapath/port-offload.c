/*
 * Offloads a live port finishes: partial checksums and GSO packets.
 *
 * Why
 * ===
 * A Linux sender whose interface offers checksum offload (every veth
 * does, by default) leaves its TCP and UDP checksums for "the hardware":
 * the packet is CHECKSUM_PARTIAL, and its checksum field holds only the
 * sum of the pseudo-header (addresses, protocol, length), folded but not
 * complemented.  One that also offers TSO (veth again) hands over TCP
 * super-packets of up to 64 kB with one header, for "the hardware" to cut
 * into segments of gso_size bytes.  When such a packet reaches a packet
 * socket or an XDP program instead of a wire (a veth's peer, a tap), it
 * arrives as it was left.  Forwarded as it is, the receiver drops it:
 * the checksum is wrong, the frame longer than the MTU.  A datapath
 * between two namespaces then passes pings and ARP but no TCP.
 *
 * What a port knows
 * =================
 * AF_PACKET (port-afpacket.c), with PACKET_VNET_HDR, puts a struct
 * virtio_net_hdr in front of each received packet: flags
 * VIRTIO_NET_HDR_F_NEEDS_CSUM with csum_start (where the summed bytes
 * start: the L4 header) and csum_offset (where the result goes: 16 for
 * TCP, 6 for UDP), and gso_type/gso_size for a super-packet.  With that,
 * completion is exact: fdp__csum_complete() does what the NIC would, and
 * fdp__gso_init()/fdp__gso_segment() what the kernel's software GSO would.
 * (Open vSwitch's netdev-linux reads the same header on its AF_PACKET
 * sockets when userspace TSO is on.)
 *
 * XDP, and so AF_XDP, sees the packet before any of this metadata exists
 * in a form it can read: Linux's XDP rx metadata kfuncs
 * (bpf_xdp_metadata_rx_*()) give a timestamp, an RSS hash and a VLAN tag,
 * and no checksum status: in 6.1 (where veth implements none of them)
 * and still in 6.18 (where it implements those three).
 * So fdp__csum_complete_guess() decides from the bytes alone: a TCP or UDP
 * checksum field that holds exactly its pseudo-header sum, in a packet
 * whose checksum does not verify, is a partial checksum, and is
 * completed.  A checksum that verifies is never touched, so no correct
 * packet is harmed.  The price: a packet that was corrupted on the way
 * AND whose checksum field happens to equal the pseudo-header sum (1 in
 * 65536 corrupted packets) has its checksum "repaired" and reaches the
 * receiver as if intact.  GSO packets do not reach an XDP program on a
 * veth (attaching one turns GSO off on its peer) nor a native-XDP driver
 * (no GRO before XDP).
 *
 * Worked example
 * ==============
 * 10.0.0.1 -> 10.0.0.2, TCP, 4-byte payload "abcd", 24-byte L4 segment
 * (20-byte header + 4).  Pseudo-header sum: 0x0a00 + 0x0001 + 0x0a00 +
 * 0x0002 + 6 (protocol) + 24 (length) = 0x1421; the sender stores 0x1421
 * in the field at L4 offset 16.  The port sums the 24 L4 bytes (field
 * included: 0x1421 plus the header and "ab" 0x6162, "cd" 0x6364), folds,
 * complements, and stores the result: exactly what summing pseudo-header
 * plus segment with a zero field would give, since the field carried the
 * pseudo-header's share.
 *
 * Thread-safety: pure functions of their arguments.
 */
#include <config.h>

#include "datapath/port-offload.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "datapath/bytes.h"

/* Ethernet: two addresses, then the EtherType; 802.1Q and 802.1ad tags
 * are 4 bytes each (TPID, TCI). */
#define ETH_HEADER_LEN 14u
#define VLAN_HEADER_LEN 4u
#define ETH_TYPE_IP 0x0800
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_VLAN_8021AD 0x88a8
#define IPV4_MIN_HLEN 20u
#define IPV6_HLEN 40u
#define TCP_MIN_HLEN 20u
#define UDP_HLEN 8u
/* Where each L4 header keeps its checksum. */
#define TCP_CSUM_OFFSET 16u
#define UDP_CSUM_OFFSET 6u
/* TCP flags byte (offset 13) bits the kernel's GSO adjusts. */
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80
/* IPv4 flags/fragment offset: MF and the 13-bit offset. */
#define IP_MF_OFFSET_MASK 0x3fff

static uint16_t
fold(uint64_t s)
{
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    return (uint16_t) s;
}

/* The one's-complement sum of 'n' bytes at 'p' (byte 0 the high byte of
 * the first 16-bit word), folded to 16 bits.  Eight bytes at a time in
 * host order: one's-complement addition commutes with byte swapping, so
 * the host-order sum, swapped once at the end, is the big-endian one. */
static uint16_t
sum_bytes(const uint8_t *p, size_t n)
{
    uint64_t s = 0;

    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        s += w;
        s += s < w;             /* End-around carry. */
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        s += w;
        s += s < w;
    }
    return ntohs(fold(s));
}

/* The value to store for a checksum whose covered bytes sum to 'sum': the
 * complement, with 0 sent as its one's-complement twin 0xffff (UDP reads
 * 0 as "no checksum"; TCP does not care). */
static uint16_t
csum_value(uint16_t sum)
{
    uint16_t v = (uint16_t) ~sum;
    return v ? v : 0xffff;
}

int
fdp__csum_complete(uint8_t *pkt, size_t len, size_t csum_start,
                   size_t csum_offset)
{
    if (csum_start >= len || csum_offset > len - csum_start
        || len - csum_start - csum_offset < 2) {
        return EINVAL;
    }
    uint16_t sum = sum_bytes(pkt + csum_start, len - csum_start);
    fdp__put16(pkt + csum_start + csum_offset, csum_value(sum));
    return 0;
}

/* Skips the Ethernet header and up to two VLAN tags of the 'len'-byte
 * 'pkt': returns the offset of the network header and its EtherType
 * through '*typep', or 0 if the frame is too short. */
static size_t
l3_offset(const uint8_t *pkt, size_t len, uint16_t *typep)
{
    size_t off = ETH_HEADER_LEN;

    if (len < ETH_HEADER_LEN) {
        return 0;
    }
    *typep = fdp__get16(pkt + 12);
    for (int i = 0; i < 2 && (*typep == ETH_TYPE_VLAN
                              || *typep == ETH_TYPE_VLAN_8021AD); i++) {
        if (len < off + VLAN_HEADER_LEN) {
            return 0;
        }
        *typep = fdp__get16(pkt + off + 2);
        off += VLAN_HEADER_LEN;
    }
    return off;
}

/* The pseudo-header's sum for the IP header at 'ip' carrying 'l4_len'
 * bytes of protocol 'proto'. */
static uint16_t
pseudo_sum(const uint8_t *ip, bool ipv6, uint8_t proto, size_t l4_len)
{
    uint64_t s = ipv6 ? sum_bytes(ip + 8, 32) : sum_bytes(ip + 12, 8);

    s += proto;
    s += (uint32_t) l4_len & 0xffff;
    s += (uint32_t) l4_len >> 16;
    return fold(s);
}

bool
fdp__csum_complete_guess(uint8_t *pkt, size_t len)
{
    uint16_t type;
    size_t l3 = l3_offset(pkt, len, &type);
    size_t l4, l4_len;
    uint8_t proto;
    bool ipv6;

    if (!l3) {
        return false;
    }
    if (type == ETH_TYPE_IP) {
        if (len < l3 + IPV4_MIN_HLEN || pkt[l3] >> 4 != 4) {
            return false;
        }
        size_t ihl = (size_t) (pkt[l3] & 0xf) * 4;
        size_t tot_len = fdp__get16(pkt + l3 + 2);
        if (ihl < IPV4_MIN_HLEN || tot_len < ihl || len < l3 + tot_len
            || fdp__get16(pkt + l3 + 6) & IP_MF_OFFSET_MASK) {
            return false;       /* Malformed, or a fragment. */
        }
        ipv6 = false;
        proto = pkt[l3 + 9];
        l4 = l3 + ihl;
        l4_len = tot_len - ihl;
    } else if (type == ETH_TYPE_IPV6) {
        if (len < l3 + IPV6_HLEN || pkt[l3] >> 4 != 6) {
            return false;
        }
        l4_len = fdp__get16(pkt + l3 + 4);
        if (len < l3 + IPV6_HLEN + l4_len) {
            return false;
        }
        ipv6 = true;
        proto = pkt[l3 + 6];    /* Extension headers: not L4, skipped. */
        l4 = l3 + IPV6_HLEN;
    } else {
        return false;
    }

    size_t field;
    if (proto == IPPROTO_TCP && l4_len >= TCP_MIN_HLEN) {
        field = l4 + TCP_CSUM_OFFSET;
    } else if (proto == IPPROTO_UDP && l4_len >= UDP_HLEN) {
        field = l4 + UDP_CSUM_OFFSET;
    } else {
        return false;
    }

    uint16_t pseudo = pseudo_sum(pkt + l3, ipv6, proto, l4_len);
    if (fdp__get16(pkt + field) != pseudo) {
        return false;           /* Not what an offloading sender leaves. */
    }
    uint16_t l4_sum = sum_bytes(pkt + l4, l4_len);
    if (fold((uint32_t) l4_sum + pseudo) == 0xffff) {
        return false;           /* Verifies as it is. */
    }
    /* The field carries the pseudo-header's share: the L4 bytes alone sum
     * to what pseudo-header plus L4 with a zero field would. */
    fdp__put16(pkt + field, csum_value(l4_sum));
    return true;
}

size_t
fdp__l4_offset(const uint8_t *pkt, size_t len)
{
    uint16_t type;
    size_t l3 = l3_offset(pkt, len, &type);
    size_t l4;
    uint8_t proto;

    if (!l3) {
        return 0;
    }
    if (type == ETH_TYPE_IP && len >= l3 + IPV4_MIN_HLEN
        && pkt[l3] >> 4 == 4 && (pkt[l3] & 0xf) * 4u >= IPV4_MIN_HLEN) {
        l4 = l3 + (pkt[l3] & 0xf) * 4u;
        proto = pkt[l3 + 9];
    } else if (type == ETH_TYPE_IPV6 && len >= l3 + IPV6_HLEN
               && pkt[l3] >> 4 == 6) {
        l4 = l3 + IPV6_HLEN;
        proto = pkt[l3 + 6];
    } else {
        return 0;
    }
    return (proto == IPPROTO_TCP || proto == IPPROTO_UDP) && l4 < len
           ? l4 : 0;
}

int
fdp__gso_init(struct fdp__gso *gso, const uint8_t *pkt, size_t len,
              const struct virtio_net_hdr *vh, size_t max_seg,
              const char **whyp)
{
    uint8_t type = vh->gso_type & (uint8_t) ~VIRTIO_NET_HDR_GSO_ECN;
    uint16_t eth_type;

    *gso = (struct fdp__gso) { .pkt = pkt, .len = len, .mss = vh->gso_size };
    if (type == VIRTIO_NET_HDR_GSO_TCPV4 || type == VIRTIO_NET_HDR_GSO_TCPV6) {
        gso->proto = IPPROTO_TCP;
    } else if (type == VIRTIO_NET_HDR_GSO_UDP_L4) {
        gso->proto = IPPROTO_UDP;
    } else {
        *whyp = "GSO type not supported (only TCP and UDP_L4; UFO would "
                "need IP fragmentation)";
        return EOPNOTSUPP;
    }
    if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
        *whyp = "GSO packet without a partial checksum";
        return EINVAL;
    }
    if (!gso->mss) {
        *whyp = "GSO packet with gso_size 0";
        return EINVAL;
    }
    gso->l3 = l3_offset(pkt, len, &eth_type);
    gso->l4 = vh->csum_start;
    if (!gso->l3) {
        *whyp = "GSO packet shorter than its Ethernet header";
        return EINVAL;
    }
    if (eth_type == ETH_TYPE_IP && len >= gso->l3 + IPV4_MIN_HLEN
        && pkt[gso->l3] >> 4 == 4
        && type != VIRTIO_NET_HDR_GSO_TCPV6
        && gso->l4 == gso->l3 + (size_t) (pkt[gso->l3] & 0xf) * 4
        && gso->l4 >= gso->l3 + IPV4_MIN_HLEN
        && pkt[gso->l3 + 9] == gso->proto) {
        gso->ipv6 = false;
    } else if (eth_type == ETH_TYPE_IPV6 && len >= gso->l3 + IPV6_HLEN
               && pkt[gso->l3] >> 4 == 6
               && type != VIRTIO_NET_HDR_GSO_TCPV4
               && gso->l4 >= gso->l3 + IPV6_HLEN) {
        gso->ipv6 = true;       /* Extension headers before l4 are kept. */
    } else {
        *whyp = "GSO packet whose IP header does not match its GSO type "
                "and csum_start";
        return EINVAL;
    }

    size_t l4_hlen = UDP_HLEN;
    if (gso->proto == IPPROTO_TCP) {
        if (len < gso->l4 + TCP_MIN_HLEN) {
            *whyp = "GSO packet shorter than its TCP header";
            return EINVAL;
        }
        l4_hlen = (size_t) (gso->pkt[gso->l4 + 12] >> 4) * 4;
        if (l4_hlen < TCP_MIN_HLEN) {
            *whyp = "GSO packet with a TCP data offset under 5";
            return EINVAL;
        }
    }
    gso->hdr_len = gso->l4 + l4_hlen;
    if (len < gso->hdr_len) {
        *whyp = "GSO packet shorter than its headers";
        return EINVAL;
    }
    size_t payload = len - gso->hdr_len;
    gso->n_segs = payload ? (uint32_t) ((payload + gso->mss - 1) / gso->mss)
                          : 1;
    if (gso->hdr_len + (payload < gso->mss ? payload : gso->mss) > max_seg) {
        *whyp = "GSO segments larger than a frame";
        return EINVAL;
    }
    return 0;
}

size_t
fdp__gso_segment(const struct fdp__gso *gso, uint32_t i, uint8_t *dst)
{
    size_t payload = gso->len - gso->hdr_len;
    size_t off = (size_t) i * gso->mss;
    size_t plen = payload - off < gso->mss ? payload - off : gso->mss;
    size_t seg_len = gso->hdr_len + plen;
    uint8_t *ip = dst + gso->l3, *l4 = dst + gso->l4;
    size_t field;

    memcpy(dst, gso->pkt, gso->hdr_len);
    memcpy(dst + gso->hdr_len, gso->pkt + gso->hdr_len + off, plen);
    if (gso->ipv6) {
        fdp__put16(ip + 4, (uint16_t) (seg_len - gso->l3 - IPV6_HLEN));
    } else {
        size_t ihl = gso->l4 - gso->l3;
        fdp__put16(ip + 2, (uint16_t) (seg_len - gso->l3));
        fdp__put16(ip + 4, (uint16_t) (fdp__get16(ip + 4) + i));
        fdp__put16(ip + 10, 0);
        fdp__put16(ip + 10, (uint16_t) ~sum_bytes(ip, ihl));
    }
    if (gso->proto == IPPROTO_TCP) {
        fdp__put32(l4 + 4, fdp__get32(l4 + 4) + (uint32_t) off);
        if (i + 1 < gso->n_segs) {
            l4[13] &= (uint8_t) ~(TCP_FIN | TCP_PSH);
        }
        if (i > 0) {
            l4[13] &= (uint8_t) ~TCP_CWR;
        }
        field = TCP_CSUM_OFFSET;
    } else {
        fdp__put16(l4 + 4, (uint16_t) (seg_len - gso->l4));
        field = UDP_CSUM_OFFSET;
    }
    fdp__put16(l4 + field, pseudo_sum(ip, gso->ipv6, gso->proto,
                                 seg_len - gso->l4));
    fdp__csum_complete(dst, seg_len, gso->l4, field);
    return seg_len;
}
