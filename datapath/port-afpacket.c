/*
 * AF_PACKET ports: "afpacket:dev=IFNAME".
 *
 * The fallback where XDP is not available: a packet socket bound to one
 * interface, with memory-mapped rings on both sides (Linux
 * Documentation/networking/packet_mmap.rst).
 *
 * Design
 * ======
 * rx: a TPACKET_V3 ring of RX_BLOCK_NR blocks of RX_BLOCK_SIZE bytes.
 * The kernel fills a block with as many packets as fit, then hands the
 * whole block over (block_status TP_STATUS_USER); it also hands over a
 * partly filled block once RX_BLOCK_TIMEOUT_MS passed, so that a trickle
 * of packets is not held back.  rx walks the packets of the current
 * block, copies each into a frame from the pmd's cache, and gives the
 * block back (TP_STATUS_KERNEL) when its last packet is taken.  The walk
 * may stop in the middle of a block when the batch is full; 'rx_block'
 * and 'rx_pkt' remember where.
 *
 * tx: a TPACKET_V3 ring of fixed-size slots (the kernel does not send
 * variable-sized V3 blocks; every slot is a frame).  tx copies each
 * packet into the next free slot (tp_status TP_STATUS_AVAILABLE), marks
 * it TP_STATUS_SEND_REQUEST, and one send() per batch makes the kernel
 * send every requested slot and mark it available again (PACKET_LOSS:
 * also one it cannot send, a packet longer than the MTU, which is then
 * lost without a count).  Datapath frames
 * are freed at once: AF_PACKET always copies, so the port never holds
 * one, and closing it has no frame to take back.
 *
 * The kernel side: the socket sees every frame on the interface
 * (PACKET_MR_PROMISC, taken back by the kernel when the socket closes),
 * but not what it sent itself (PACKET_IGNORE_OUTGOING, Linux 4.20);
 * PACKET_QDISC_BYPASS sends straight to the driver, as a switch port
 * should (no queueing discipline between the datapath and the wire; a
 * full driver queue drops, which the datapath's own batching makes rare).
 *
 * The kernel strips a VLAN tag into the ring's metadata
 * (TP_STATUS_VLAN_VALID); rx puts it back, so that flows see the frame
 * as it was on the wire.
 *
 * Offloads.  The socket has PACKET_VNET_HDR: the kernel writes a struct
 * virtio_net_hdr just before each received packet in the rx ring
 * (tpacket_rcv() reserves its 10 bytes in front of tp_mac), and expects
 * one in front of each packet in a tx slot (tpacket_snd()).  Both rings
 * take the header since 2017's Linux 4.1x, so Debian 12's 6.1 has them;
 * the option must be set before the rings exist.  test-live-ports checks
 * both ways against the kernel.  So a packet the
 * local stack sent with checksum offload (a veth peer's, by default) comes
 * with csum_start and csum_offset, and rx completes its checksum
 * (port-offload.c) before the datapath sees it; a TSO super-packet (a
 * veth peer's TCP, by default, up to 64 kB) comes with gso_type and
 * gso_size, and rx cuts it into MTU-sized segments, one frame each, as
 * the kernel's software GSO would (TCP over IPv4 and IPv6, and UDP_L4;
 * anything else is refused, counted in rx_errors).  The rx blocks are
 * 128 kB so that a whole 64 kB super-packet fits one: a truncated packet
 * cannot be segmented.  tx writes a header with no offload (all zeros):
 * every packet leaves complete.  How many were completed and segmented is
 * in the port's description (fdp_dp_port_describe(), `flowdp-ctl show`).
 * Segmenting costs a copy per segment, as the copy of any packet does;
 * the kernel cannot be asked to segment for a packet socket, but a
 * sender with TSO off (or an interface with GRO and LRO off) sends
 * none.
 *
 * Thread-safety: rx and recycle run on the polling pmd only; tx under the
 * port's tx_mutex.  They share nothing but the socket.
 */
#include <config.h>

#include "datapath/dp-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/ds.h"
#include "lib/util.h"
#include "datapath/port-offload.h"

/* Ring geometry.  128 kB blocks hold one GSO super-packet of up to 64 kB
 * (the kernel's default gso_max_size) with its headers, or about 80
 * full-size frames; 32 of them (4 MB) absorb a burst of some 2600 such
 * frames, or 40000 small ones, while the pmd is busy elsewhere.  A block
 * is handed over at the latest after 1 ms, the kernel's smallest
 * timeout. */
#define RX_BLOCK_SIZE (1u << 17)
#define RX_BLOCK_NR 32u
#define RX_BLOCK_TIMEOUT_MS 1u
/* tx slots: 4 kB (a page) holds the slot header and any packet of a
 * frame of up to 4 kB minus its headroom; 512 of them queue 16 batches. */
#define TX_SLOT_SIZE 4096u
#define TX_SLOT_NR 512u
#define TX_BLOCK_SIZE (1u << 16)
/* Where the kernel expects a tx packet in its slot (af_packet.c,
 * tpacket_parse_header(): tp_hdrlen less the sockaddr_ll that only rx
 * slots carry). */
#define TX_DATA_OFFSET TPACKET_ALIGN(sizeof(struct tpacket3_hdr))
/* The virtio-net header in front of every packet, both ways. */
#define VNET_HDR_SIZE sizeof(struct virtio_net_hdr)
/* An 802.1Q tag, as rx puts back the one the kernel took off: TPID and
 * TCI, two bytes each. */
#define VLAN_TAG_SIZE 4u
/* The room for a packet in a tx slot, after the slot header and the
 * virtio-net header. */
#define TX_ROOM (TX_SLOT_SIZE - TX_DATA_OFFSET - VNET_HDR_SIZE)

/* How often recycle reads the kernel's drop counter: every this many polls
 * (one system call; at the idle pmd's 50 us naps, some 20 times a
 * second). */
#define STATS_INTERVAL 1024

static_assert(RX_BLOCK_SIZE % 4096 == 0 && TX_BLOCK_SIZE % 4096 == 0,
              "ring blocks are whole pages");
static_assert(TX_BLOCK_SIZE % TX_SLOT_SIZE == 0
              && TX_SLOT_NR % (TX_BLOCK_SIZE / TX_SLOT_SIZE) == 0,
              "tx slots fill their blocks");

struct afpacket_port {
    struct fdp__port up;
    char *dev;
    int fd;
    uint8_t *map;               /* rx ring, then tx ring. */
    size_t map_size;

    /* rx: polling pmd only. */
    uint32_t rx_block;          /* Block being read. */
    uint32_t rx_pkt;            /* Packets of it already taken. */
    struct tpacket3_hdr *rx_next;   /* The next one, if rx_pkt > 0. */
    uint32_t rx_seg;            /* Segments of it already taken (GSO). */

    /* Offloads finished (relaxed atomics, for describe). */
    uint64_t n_csum;            /* Partial checksums completed. */
    uint64_t n_gso;             /* GSO packets segmented... */
    uint64_t n_gso_segs;        /* ...into this many segments. */

    uint32_t recycles;          /* Polling pmd: for STATS_INTERVAL. */

    /* tx: under tx_mutex. */
    uint8_t *tx_ring;
    uint32_t tx_head;           /* Next slot to fill. */
    bool tx_kick_failed;        /* Last send() failed: try again. */
};

static struct afpacket_port *
afpacket_cast(struct fdp__port *port)
{
    return (struct afpacket_port *) port;
}

/* Checks that 'dev' names an interface and returns its index through
 * '*ifindex'.  Shared by the AF_PACKET and AF_XDP ports. */
int
fdp__port_ifindex(const char *type, const char *dev, unsigned int *ifindex,
                  char **errorp)
{
    if (!dev) {
        *errorp = fdp__xasprintf("%s: needs dev=IFNAME", type);
        return EINVAL;
    }
    if (strlen(dev) >= IFNAMSIZ || strchr(dev, '/')) {
        *errorp = fdp__xasprintf("%s: dev=%s: not an interface name (1 to "
                                 "%d bytes, no '/')", type, dev,
                                 IFNAMSIZ - 1);
        return EINVAL;
    }
    *ifindex = if_nametoindex(dev);
    if (!*ifindex) {
        int error = errno ? errno : ENODEV;
        *errorp = fdp__xasprintf("%s: dev=%s: %s", type, dev,
                                 error == ENODEV ? "no such device"
                                                 : strerror(error));
        return error;
    }
    return 0;
}

static void
afpacket_free(struct afpacket_port *ap)
{
    if (ap->map && ap->map != MAP_FAILED) {
        munmap(ap->map, ap->map_size);
    }
    if (ap->fd >= 0) {
        close(ap->fd);
    }
    free(ap->dev);
    free(ap);
}

/* setsockopt(SOL_PACKET, 'opt') with a message naming the option and the
 * kernel's reason on failure. */
static int
set_packet_opt(struct afpacket_port *ap, int opt, const char *name,
               const void *value, socklen_t size, char **errorp)
{
    if (setsockopt(ap->fd, SOL_PACKET, opt, value, size) < 0) {
        int error = errno;
        *errorp = fdp__xasprintf("afpacket: dev=%s: %s: %s", ap->dev, name,
                                 strerror(error));
        return error;
    }
    return 0;
}

static int
afpacket_setup(struct afpacket_port *ap, unsigned int ifindex,
               char **errorp)
{
    int version = TPACKET_V3, one = 1;
    struct tpacket_req3 rx_req = {
        .tp_block_size = RX_BLOCK_SIZE,
        .tp_block_nr = RX_BLOCK_NR,
        .tp_frame_size = TX_SLOT_SIZE,  /* Only checked for V3 rx. */
        .tp_frame_nr = RX_BLOCK_SIZE / TX_SLOT_SIZE * RX_BLOCK_NR,
        .tp_retire_blk_tov = RX_BLOCK_TIMEOUT_MS,
    };
    /* V3 tx refuses a block timeout, private area or feature request. */
    struct tpacket_req3 tx_req = {
        .tp_block_size = TX_BLOCK_SIZE,
        .tp_block_nr = TX_SLOT_NR / (TX_BLOCK_SIZE / TX_SLOT_SIZE),
        .tp_frame_size = TX_SLOT_SIZE,
        .tp_frame_nr = TX_SLOT_NR,
    };
    struct packet_mreq mreq = {
        .mr_ifindex = (int) ifindex,
        .mr_type = PACKET_MR_PROMISC,
    };
    struct sockaddr_ll sll = {
        .sll_family = AF_PACKET,
        .sll_protocol = htons(ETH_P_ALL),
        .sll_ifindex = (int) ifindex,
    };
    int error;

    /* Protocol 0: nothing is received before bind() picks the interface,
     * so the ring never holds another interface's frames. */
    ap->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (ap->fd < 0) {
        error = errno;
        *errorp = fdp__xasprintf("afpacket: dev=%s: packet socket: %s%s",
                                 ap->dev, strerror(error),
                                 error == EPERM ? " (needs CAP_NET_RAW)"
                                                : "");
        return error;
    }
    error = set_packet_opt(ap, PACKET_VERSION, "TPACKET_V3", &version,
                           sizeof version, errorp);
    if (!error) {
        /* Before the rings, which fix their frame layout (the kernel
         * refuses it after with EBUSY). */
        error = set_packet_opt(ap, PACKET_VNET_HDR, "virtio-net header",
                               &one, sizeof one, errorp);
    }
    if (!error) {
        /* A slot the kernel cannot send (a packet longer than the MTU)
         * is skipped and made available again.  Without this the kernel
         * marks it TP_STATUS_WRONG_FORMAT and stops at it: every later
         * slot would wait until tx came round the ring to reuse it.
         * (Before the rings exist: the kernel refuses it after.) */
        error = set_packet_opt(ap, PACKET_LOSS, "packet loss", &one,
                               sizeof one, errorp);
    }
    if (!error) {
        error = set_packet_opt(ap, PACKET_RX_RING, "rx ring", &rx_req,
                               sizeof rx_req, errorp);
    }
    if (!error) {
        error = set_packet_opt(ap, PACKET_TX_RING, "tx ring", &tx_req,
                               sizeof tx_req, errorp);
    }
    if (!error) {
        error = set_packet_opt(ap, PACKET_QDISC_BYPASS, "qdisc bypass",
                               &one, sizeof one, errorp);
    }
    if (!error) {
        error = set_packet_opt(ap, PACKET_IGNORE_OUTGOING, "ignore outgoing",
                               &one, sizeof one, errorp);
    }
    if (!error) {
        error = set_packet_opt(ap, PACKET_ADD_MEMBERSHIP, "promiscuous mode",
                               &mreq, sizeof mreq, errorp);
    }
    if (error) {
        return error;
    }

    ap->map_size = (size_t) RX_BLOCK_SIZE * RX_BLOCK_NR
                   + (size_t) TX_SLOT_SIZE * TX_SLOT_NR;
    ap->map = mmap(NULL, ap->map_size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, ap->fd, 0);
    if (ap->map == MAP_FAILED) {
        error = errno;
        ap->map = NULL;
        *errorp = fdp__xasprintf("afpacket: dev=%s: mapping the rings: %s",
                                 ap->dev, strerror(error));
        return error;
    }
    ap->tx_ring = ap->map + (size_t) RX_BLOCK_SIZE * RX_BLOCK_NR;

    if (bind(ap->fd, (struct sockaddr *) &sll, sizeof sll) < 0) {
        error = errno;
        *errorp = fdp__xasprintf("afpacket: dev=%s: bind: %s", ap->dev,
                                 strerror(error));
        return error;
    }
    return 0;
}

static int
afpacket_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
              char **errorp)
{
    struct fdp__port_arg known[] = { { "dev", NULL } };
    unsigned int ifindex = 0;
    int error = fdp__port_parse_args("afpacket", args, known, 1, errorp);

    if (!error) {
        error = fdp__port_ifindex("afpacket", known[0].value, &ifindex,
                                  errorp);
    }
    /* A packet may start anywhere after its frame's metadata (pushed
     * tags grow into the headroom). */
    if (!error && fdp__dp_frame_size(dp) - FDP__FRAME_META_SIZE
                  > TX_ROOM) {
        *errorp = fdp__xasprintf("afpacket: dev=%s: frames of %" PRIu32
                                 " bytes hold packets larger than a tx "
                                 "slot (%zu bytes)", known[0].value,
                                 fdp__dp_frame_size(dp), (size_t) TX_ROOM);
        error = EINVAL;
    }
    if (error) {
        fdp__port_free_args(known, 1);
        return error;
    }

    struct afpacket_port *ap = calloc(1, sizeof *ap);
    if (!ap) {
        fdp__port_free_args(known, 1);
        return ENOMEM;
    }
    ap->dev = known[0].value;
    ap->fd = -1;
    error = afpacket_setup(ap, ifindex, errorp);
    if (error) {
        afpacket_free(ap);
        return error;
    }
    *portp = &ap->up;
    return 0;
}

static void
afpacket_close(struct fdp__port *port)
{
    afpacket_free(afpacket_cast(port));
}

static struct tpacket_block_desc *
rx_block_desc(struct afpacket_port *ap, uint32_t block)
{
    return (void *) (ap->map + (size_t) block * RX_BLOCK_SIZE);
}

/* Refuses a packet: counts it in rx_errors, and records why. */
#define RX_REFUSE(AP, ...)                                  \
    do {                                                    \
        fdp__count(&(AP)->up.stats.rx_errors, 1);           \
        fdp__port_set_error(&(AP)->up, __VA_ARGS__);        \
    } while (0)

/* Fills '*desc' for the 'len'-byte packet in 'frame', received at the
 * time in 'h'; if the kernel stripped a VLAN tag from it, puts the tag
 * back first: the packet was written VLAN_TAG_SIZE bytes into the frame's
 * packet area, so the addresses move to the front and the tag goes
 * between them and the rest. */
static void
rx_finish(struct afpacket_port *ap, const struct tpacket3_hdr *h,
          uint64_t frame, uint32_t len, struct fdp_desc *desc)
{
    uint8_t *umem = fdp__dp_umem(ap->up.dp, NULL);
    uint8_t *dst = umem + frame + FDP_DP_HEADROOM;
    struct fdp__frame_meta *meta = (void *) (umem + frame);

    meta->ts_usec = (int64_t) h->tp_sec * 1000000 + h->tp_nsec / 1000;
    if (h->tp_status & TP_STATUS_VLAN_VALID) {
        uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID)
                        ? h->hv1.tp_vlan_tpid : ETH_P_8021Q;
        uint16_t tag[2] = { htons(tpid),
                            htons((uint16_t) h->hv1.tp_vlan_tci) };
        memmove(dst, dst + VLAN_TAG_SIZE, 2 * ETH_ALEN);
        memcpy(dst + 2 * ETH_ALEN, tag, sizeof tag);
        len += VLAN_TAG_SIZE;
    }
    *desc = (struct fdp_desc) { .addr = frame + FDP_DP_HEADROOM,
                                .len = len };
}

/* Cuts the GSO packet 'data' ('h''s, described by 'vh') into segments,
 * one frame from 'cache' each, and fills descs[0..n-1].  ap->rx_seg
 * counts the segments taken in earlier calls.  Returns the number of
 * descriptors filled; sets '*done' to false if the packet has segments
 * left (no free frame, or 'n' reached). */
static uint32_t
rx_gso(struct afpacket_port *ap, struct fdp__frame_cache *cache,
       const struct tpacket3_hdr *h, const uint8_t *data,
       const struct virtio_net_hdr *vh, uint32_t shift,
       struct fdp_desc *descs, uint32_t n, bool *done)
{
    uint32_t room = fdp__dp_frame_size(ap->up.dp) - FDP_DP_HEADROOM;
    uint8_t *umem = fdp__dp_umem(ap->up.dp, NULL);
    struct fdp__gso gso;
    const char *why;
    uint32_t k = 0;

    if (fdp__gso_init(&gso, data, h->tp_snaplen, vh, room - shift, &why)) {
        RX_REFUSE(ap, "afpacket: dev=%s: a %" PRIu32 "-byte GSO packet "
                  "(gso_type %u, gso_size %u) refused: %s", ap->dev,
                  h->tp_snaplen, vh->gso_type, vh->gso_size, why);
        return 0;
    }
    while (ap->rx_seg < gso.n_segs) {
        uint64_t frame = k < n ? fdp__cache_get(cache) : UINT64_MAX;
        if (frame == UINT64_MAX) {
            *done = false;
            return k;
        }
        uint8_t *dst = umem + frame + FDP_DP_HEADROOM + shift;
        size_t len = fdp__gso_segment(&gso, ap->rx_seg, dst);
        rx_finish(ap, h, frame, (uint32_t) len, &descs[k++]);
        ap->rx_seg++;
    }
    fdp__count(&ap->n_gso, 1);
    fdp__count(&ap->n_gso_segs, gso.n_segs);
    ap->rx_seg = 0;
    return k;
}

/* Takes the packet 'h' (in block 'bd'): copies it into a frame from
 * 'cache', its checksum completed, or cuts it into segments if it is a
 * GSO packet, and fills descs[0..n-1] (n > 0).  Returns the number of
 * descriptors filled (0 if the packet was refused and counted); sets
 * '*done' to false if it must be taken up again (no free frame, or 'n'
 * segments were not enough). */
static uint32_t
rx_packet(struct afpacket_port *ap, struct fdp__frame_cache *cache,
          const struct tpacket_block_desc *bd, const struct tpacket3_hdr *h,
          struct fdp_desc *descs, uint32_t n, bool *done)
{
    uint32_t room = fdp__dp_frame_size(ap->up.dp) - FDP_DP_HEADROOM;
    uint32_t shift = h->tp_status & TP_STATUS_VLAN_VALID ? VLAN_TAG_SIZE : 0;
    const uint8_t *data = (const uint8_t *) h + h->tp_mac;
    struct virtio_net_hdr vh;

    *done = true;
    /* The kernel's offsets are trusted no further than the block. */
    if (h->tp_mac < sizeof *h + VNET_HDR_SIZE
        || (const uint8_t *) h + h->tp_mac + h->tp_snaplen
           > (const uint8_t *) bd + RX_BLOCK_SIZE
        || h->tp_snaplen < 2 * ETH_ALEN || h->tp_snaplen < h->tp_len) {
        RX_REFUSE(ap, "afpacket: dev=%s: a %" PRIu32 "-byte packet (%"
                  PRIu32 " captured) is not whole in the ring", ap->dev,
                  h->tp_len, h->tp_snaplen);
        return 0;
    }
    /* In host byte order: the kernel writes it so for a packet socket
     * (vio_le() is the host's order there). */
    memcpy(&vh, data - VNET_HDR_SIZE, sizeof vh);
    if (shift && vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
        /* csum_start counts from the frame as the ring holds it, without
         * the tag the kernel took off (Linux 6.1 to 6.18); should a
         * kernel count the tag too (as macvtap does for its readers), the
         * L4 header tells. */
        size_t l4 = fdp__l4_offset(data, h->tp_snaplen);
        if (l4 && vh.csum_start == l4 + VLAN_TAG_SIZE) {
            vh.csum_start = (uint16_t) l4;
        }
    }
    if (vh.gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        return rx_gso(ap, cache, h, data, &vh, shift, descs, n, done);
    }
    if (h->tp_snaplen + shift > room) {
        RX_REFUSE(ap, "afpacket: dev=%s: a %" PRIu32 "-byte packet does not "
                  "fit a %" PRIu32 "-byte frame", ap->dev,
                  h->tp_snaplen + shift, room);
        return 0;
    }

    uint64_t frame = fdp__cache_get(cache);
    if (frame == UINT64_MAX) {
        *done = false;
        return 0;
    }
    uint8_t *dst = (uint8_t *) fdp__dp_umem(ap->up.dp, NULL) + frame
                   + FDP_DP_HEADROOM + shift;
    memcpy(dst, data, h->tp_snaplen);
    if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
        if (fdp__csum_complete(dst, h->tp_snaplen, vh.csum_start,
                               vh.csum_offset)) {
            fdp__cache_put(cache, frame);
            RX_REFUSE(ap, "afpacket: dev=%s: a %" PRIu32 "-byte packet "
                      "refused: its partial checksum (csum_start %u, "
                      "csum_offset %u) lies outside it", ap->dev,
                      h->tp_snaplen, vh.csum_start, vh.csum_offset);
            return 0;
        }
        fdp__count(&ap->n_csum, 1);
    }
    rx_finish(ap, h, frame, h->tp_snaplen, &descs[0]);
    return 1;
}

static uint32_t
afpacket_rx(struct fdp__port *port, struct fdp__frame_cache *cache,
            struct fdp_desc *descs, uint32_t n, bool *eof)
{
    struct afpacket_port *ap = afpacket_cast(port);
    uint32_t k = 0;

    *eof = false;
    while (k < n) {
        struct tpacket_block_desc *bd = rx_block_desc(ap, ap->rx_block);
        if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE)
              & TP_STATUS_USER)) {
            break;              /* The kernel is still filling it. */
        }
        uint32_t n_pkts = bd->hdr.bh1.num_pkts;
        if (!ap->rx_pkt) {
            ap->rx_next = (void *) ((uint8_t *) bd
                                    + bd->hdr.bh1.offset_to_first_pkt);
        }
        while (ap->rx_pkt < n_pkts && k < n) {
            struct tpacket3_hdr *h = ap->rx_next;
            bool done;
            if ((uint8_t *) h + sizeof *h > (uint8_t *) bd + RX_BLOCK_SIZE) {
                ap->rx_pkt = n_pkts;        /* Garbled: skip the block. */
                ap->rx_seg = 0;
                break;
            }
            k += rx_packet(ap, cache, bd, h, &descs[k], n - k, &done);
            if (!done) {
                return k;       /* No free frame, or batch full: the rest
                                 * of the packet stays. */
            }
            ap->rx_pkt++;
            ap->rx_next = (void *) ((uint8_t *) h + h->tp_next_offset);
        }
        if (ap->rx_pkt < n_pkts) {
            break;              /* Batch full: resume here next time. */
        }
        __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
                         __ATOMIC_RELEASE);
        ap->rx_pkt = 0;
        ap->rx_block = (ap->rx_block + 1) % RX_BLOCK_NR;
    }
    return k;
}

/* Asks the kernel to send every slot marked TP_STATUS_SEND_REQUEST. */
static void
tx_kick(struct afpacket_port *ap)
{
    if (send(ap->fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EINTR) {
        int error = errno;
        __atomic_store_n(&ap->tx_kick_failed, true, __ATOMIC_RELAXED);
        if (error != EAGAIN && error != ENOBUFS) {
            fdp__port_set_error(&ap->up, "afpacket: dev=%s: send: %s",
                                ap->dev, strerror(error));
        }
    } else {
        __atomic_store_n(&ap->tx_kick_failed, false, __ATOMIC_RELAXED);
    }
}

static uint32_t
afpacket_tx(struct fdp__port *port, struct fdp__frame_cache *cache,
            const struct fdp_desc *descs, uint32_t n)
{
    struct afpacket_port *ap = afpacket_cast(port);
    const uint8_t *umem = fdp__dp_umem(port->dp, NULL);
    uint32_t sent = 0;

    for (uint32_t i = 0; i < n; i++) {
        struct tpacket3_hdr *slot
            = (void *) (ap->tx_ring + (size_t) ap->tx_head * TX_SLOT_SIZE);
        uint32_t status = __atomic_load_n(&slot->tp_status,
                                          __ATOMIC_ACQUIRE);
        if (status == TP_STATUS_WRONG_FORMAT) {
            /* Not with PACKET_LOSS; should a kernel do it anyway, the slot
             * is taken again rather than left to block the ring. */
            fdp__port_set_error(port, "afpacket: dev=%s: the kernel "
                                "refused a packet as malformed", ap->dev);
        } else if (status != TP_STATUS_AVAILABLE) {
            /* Ring full: the kernel has not sent this slot yet. */
            for (uint32_t j = i; j < n; j++) {
                fdp__cache_put(cache, descs[j].addr);
            }
            break;
        }
        /* No offload: flags and gso_type 0, the packet complete. */
        memset((uint8_t *) slot + TX_DATA_OFFSET, 0, VNET_HDR_SIZE);
        memcpy((uint8_t *) slot + TX_DATA_OFFSET + VNET_HDR_SIZE,
               umem + descs[i].addr, descs[i].len);
        slot->tp_len = descs[i].len + VNET_HDR_SIZE;
        slot->tp_next_offset = 0;
        __atomic_store_n(&slot->tp_status, TP_STATUS_SEND_REQUEST,
                         __ATOMIC_RELEASE);
        ap->tx_head = (ap->tx_head + 1) % TX_SLOT_NR;
        fdp__cache_put(cache, descs[i].addr);
        sent++;
    }
    if (sent) {
        tx_kick(ap);
    }
    return sent;
}

/* Adds the packets the kernel dropped since the last read (the ring was
 * full) to rx_errors.  Reading the counters resets them. */
static void
read_kernel_stats(struct afpacket_port *ap)
{
    struct tpacket_stats_v3 st = { 0 };
    socklen_t len = sizeof st;

    if (!getsockopt(ap->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len)
        && st.tp_drops) {
        fdp__count(&ap->up.stats.rx_errors, st.tp_drops);
        fdp__port_set_error(&ap->up, "afpacket: dev=%s: the kernel dropped "
                            "%u packets: the rx ring was full", ap->dev,
                            st.tp_drops);
    }
}

/* A send() that failed for want of buffers is tried again after each
 * poll, so that requested slots do not wait for the next packet; now and
 * then, the kernel's drop counter. */
static void
afpacket_recycle(struct fdp__port *port, struct fdp__frame_cache *cache)
{
    struct afpacket_port *ap = afpacket_cast(port);

    (void) cache;
    if (!(++ap->recycles % STATS_INTERVAL)) {
        read_kernel_stats(ap);
    }
    if (__atomic_load_n(&ap->tx_kick_failed, __ATOMIC_RELAXED)
        && !pthread_mutex_trylock(&port->tx_mutex)) {
        if (__atomic_load_n(&ap->tx_kick_failed, __ATOMIC_RELAXED)) {
            tx_kick(ap);
        }
        pthread_mutex_unlock(&port->tx_mutex);
    }
}

static void
afpacket_describe(const struct fdp__port *port, char *buf, size_t size)
{
    const struct afpacket_port *ap = (const struct afpacket_port *) port;

    snprintf(buf, size, "virtio-net header; %" PRIu64 " partial checksums "
             "completed, %" PRIu64 " GSO packets cut into %" PRIu64
             " segments", fdp__read_count(&ap->n_csum),
             fdp__read_count(&ap->n_gso), fdp__read_count(&ap->n_gso_segs));
}

const struct fdp__port_class fdp__afpacket_port_class = {
    .type = "afpacket",
    .open = afpacket_open,
    .close = afpacket_close,
    .rx = afpacket_rx,
    .tx = afpacket_tx,
    .recycle = afpacket_recycle,
    .describe = afpacket_describe,
};
