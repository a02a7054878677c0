/*
 * Port back ends: in-process rings and pcap capture files.
 *
 * Ring ports are AF_XDP sockets turned around: the datapath plays user
 * space and the embedding program's peer thread plays the kernel (or the
 * NIC).  The datapath keeps the fill ring stocked with free frames and
 * collects completed ones; the peer fills frames and submits them on rx,
 * drains tx and returns frames on completion.  Every frame the peer holds
 * is marked with the port's number in the datapath's owner table, so a
 * descriptor that names a frame the peer does not hold (a bug in the
 * peer, or garbage) is refused and counted instead of corrupting another
 * packet, and closing the port takes back every frame the peer held.
 *
 * Pcap ports read and write capture files with libpcap.  Reading stops at
 * the end of the file (the port is then exhausted); writing keeps each
 * packet's receive time, so replaying a capture through "output" gives a
 * capture with the same timestamps.
 */
#include <config.h>

#include "datapath/dp-private.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "lib/util.h"

/* ---------------------------------------------------------------------- */
/* Arguments: "key=value,key=value".                                       */

int
fdp__port_parse_args(const char *type, const char *args,
                     struct fdp__port_arg *known, size_t n_known,
                     char **errorp)
{
    char *copy = strdup(args ? args : "");
    char *save = NULL;
    int error = 0;

    if (!copy) {
        return ENOMEM;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok && !error;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        size_t i;
        if (!eq || eq == tok || !eq[1]) {
            *errorp = fdp__xasprintf("%s: \"%s\" is not KEY=VALUE", type,
                                     tok);
            error = EINVAL;
            break;
        }
        *eq = '\0';
        for (i = 0; i < n_known; i++) {
            if (!strcmp(tok, known[i].key)) {
                break;
            }
        }
        if (i == n_known) {
            *errorp = fdp__xasprintf("%s: unknown option \"%s\"", type, tok);
            error = EINVAL;
        } else if (known[i].value) {
            *errorp = fdp__xasprintf("%s: %s given twice", type, tok);
            error = EINVAL;
        } else if (!(known[i].value = strdup(eq + 1))) {
            error = ENOMEM;
        }
    }
    free(copy);
    return error;
}

void
fdp__port_free_args(struct fdp__port_arg *args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(args[i].value);
    }
}

uint32_t
fdp__port_rx_none(struct fdp__port *port, struct fdp__frame_cache *cache,
                  struct fdp_desc *descs, uint32_t n, bool *eof)
{
    (void) port;
    (void) cache;
    (void) descs;
    (void) n;
    *eof = true;
    return 0;
}

uint32_t
fdp__port_tx_drop(struct fdp__port *port, struct fdp__frame_cache *cache,
                  const struct fdp_desc *descs, uint32_t n)
{
    (void) port;
    for (uint32_t i = 0; i < n; i++) {
        fdp__cache_put(cache, descs[i].addr);
    }
    return 0;
}

void
fdp__port_set_error(struct fdp__port *port, const char *format, ...)
{
    va_list args;

    pthread_mutex_lock(&port->error_mutex);
    va_start(args, format);
    vsnprintf(port->error, sizeof port->error, format, args);
    va_end(args);
    pthread_mutex_unlock(&port->error_mutex);
}

/* ---------------------------------------------------------------------- */
/* Ring ports.                                                             */

#define RING_DEFAULT_SIZE 1024
#define RING_MAX_SIZE 65536     /* 4 rings x 64k frames is plenty. */

struct ring_port {
    struct fdp__port up;
    struct fdp_ring *fill, *rx, *tx, *completion;

    /* The datapath's buffer area, copied here at open so that the
     * per-descriptor checks make no calls. */
    uint32_t *owner;            /* Per frame: the port holding it. */
    uint64_t umem_size;
    uint32_t frame_size;
    unsigned int frame_shift;   /* log2(frame_size). */
};

static struct ring_port *
ring_port_cast(struct fdp__port *port)
{
    return (struct ring_port *) port;
}

static void
ring_port_free(struct ring_port *rp)
{
    fdp_ring_destroy(rp->fill);
    fdp_ring_destroy(rp->rx);
    fdp_ring_destroy(rp->tx);
    fdp_ring_destroy(rp->completion);
    free(rp);
}

static int
ring_port_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
               char **errorp)
{
    struct fdp__port_arg known[] = { { "size", NULL } };
    unsigned long size = RING_DEFAULT_SIZE;
    int error = fdp__port_parse_args("ring", args, known, 1, errorp);

    if (!error && known[0].value) {
        char *end;
        errno = 0;
        size = strtoul(known[0].value, &end, 0);
        if (errno || *end || size < 2 || size > RING_MAX_SIZE
            || (size & (size - 1))) {
            *errorp = fdp__xasprintf("ring: size=%s is not a power of two "
                                     "from 2 to %d", known[0].value,
                                     RING_MAX_SIZE);
            error = EINVAL;
        }
    }
    fdp__port_free_args(known, 1);
    if (error) {
        return error;
    }

    struct ring_port *rp = calloc(1, sizeof *rp);
    if (!rp) {
        return ENOMEM;
    }
    fdp__dp_umem(dp, &rp->umem_size);
    rp->owner = fdp__dp_frame_owner(dp);
    rp->frame_size = fdp__dp_frame_size(dp);
    rp->frame_shift = (unsigned int) __builtin_ctz(rp->frame_size);
    if (fdp_ring_create((uint32_t) size, &rp->fill)
        || fdp_ring_create((uint32_t) size, &rp->rx)
        || fdp_ring_create((uint32_t) size, &rp->tx)
        || fdp_ring_create((uint32_t) size, &rp->completion)) {
        ring_port_free(rp);
        return ENOMEM;
    }
    *portp = &rp->up;
    return 0;
}

static void
ring_port_close(struct fdp__port *port)
{
    struct ring_port *rp = ring_port_cast(port);
    uint32_t *owner = fdp__dp_frame_owner(port->dp);
    uint32_t frame_size = fdp__dp_frame_size(port->dp);
    uint64_t umem_size;
    struct fdp__frame_cache cache;

    /* Every frame the peer holds (on the fill ring, in its hands, on the
     * rx or completion ring, or on the tx ring) comes back. */
    fdp__dp_umem(port->dp, &umem_size);
    fdp__cache_init(&cache, fdp__dp_pool(port->dp));
    for (uint64_t i = 0; i < umem_size / frame_size; i++) {
        if (owner[i] == port->port_no) {
            owner[i] = 0;
            fdp__cache_put(&cache, i * frame_size);
        }
    }
    fdp__cache_flush(&cache);
    ring_port_free(rp);
}

/* Checks a descriptor from the peer: it must name a frame the peer holds
 * for this port, with the packet inside the frame after the metadata.
 * Takes the frame back and returns true, or counts an error. */
static inline bool
ring_port_take(struct ring_port *rp, const struct fdp_desc *d,
               bool need_packet)
{
    uint64_t offset = d->addr & (rp->frame_size - 1);
    uint64_t frame = d->addr >> rp->frame_shift;

    if (FDP_UNLIKELY(d->addr >= rp->umem_size
                     || rp->owner[frame] != rp->up.port_no
                     || (need_packet
                         && (offset < FDP__FRAME_META_SIZE
                             || d->len > rp->frame_size - offset
                             || d->len == 0)))) {
        fdp__count(&rp->up.stats.rx_errors, 1);
        fdp__port_set_error(&rp->up, "peer gave back a bad descriptor "
                            "(addr %#" PRIx64 ", len %" PRIu32 ")",
                            d->addr, d->len);
        return false;
    }
    rp->owner[frame] = 0;
    return true;
}

/* Hands free frames to the peer until the fill ring is full or the cache
 * is empty. */
static void
ring_port_stock(struct ring_port *rp, struct fdp__frame_cache *cache)
{
    uint32_t frame_size = rp->frame_size;
    uint32_t *owner = rp->owner;
    uint32_t idx, n = fdp_ring_reserve(rp->fill, UINT32_MAX, &idx);
    uint32_t i;

    for (i = 0; i < n; i++) {
        uint64_t frame = fdp__cache_get(cache);
        if (frame == UINT64_MAX) {
            break;
        }
        owner[frame >> rp->frame_shift] = rp->up.port_no;
        *fdp_ring_slot(rp->fill, idx + i) = (struct fdp_desc) {
            .addr = frame + FDP_DP_HEADROOM,
            .len = frame_size - FDP_DP_HEADROOM,
        };
    }
    fdp_ring_submit(rp->fill, i);
    /* Reserved slots not filled are simply reserved again next time. */
    fdp_ring_cancel(rp->fill, n - i);
}

static uint32_t
ring_port_rx(struct fdp__port *port, struct fdp__frame_cache *cache,
             struct fdp_desc *descs, uint32_t n, bool *eof)
{
    struct ring_port *rp = ring_port_cast(port);
    uint32_t idx, got, k = 0;

    (void) cache;
    *eof = false;
    got = fdp_ring_peek(rp->rx, n, &idx);
    for (uint32_t i = 0; i < got; i++) {
        const struct fdp_desc *d = fdp_ring_slot(rp->rx, idx + i);
        if (ring_port_take(rp, d, true)) {
            descs[k++] = *d;
        }
    }
    fdp_ring_release(rp->rx, got);
    return k;
}

static uint32_t
ring_port_tx(struct fdp__port *port, struct fdp__frame_cache *cache,
             const struct fdp_desc *descs, uint32_t n)
{
    struct ring_port *rp = ring_port_cast(port);
    uint32_t idx, room = fdp_ring_reserve(rp->tx, n, &idx);

    for (uint32_t i = 0; i < room; i++) {
        rp->owner[descs[i].addr >> rp->frame_shift] = port->port_no;
        *fdp_ring_slot(rp->tx, idx + i) = descs[i];
    }
    fdp_ring_submit(rp->tx, room);
    for (uint32_t i = room; i < n; i++) {
        fdp__cache_put(cache, descs[i].addr);
    }
    return room;
}

/* Takes back completed frames and restocks the fill ring (also called
 * once when the port is added, so that the peer has frames at once). */
static void
ring_port_recycle(struct fdp__port *port, struct fdp__frame_cache *cache)
{
    struct ring_port *rp = ring_port_cast(port);
    uint32_t idx, n = fdp_ring_peek(rp->completion, UINT32_MAX, &idx);

    for (uint32_t i = 0; i < n; i++) {
        const struct fdp_desc *d = fdp_ring_slot(rp->completion, idx + i);
        if (ring_port_take(rp, d, false)) {
            fdp__cache_put(cache, d->addr);
        }
    }
    fdp_ring_release(rp->completion, n);
    ring_port_stock(rp, cache);
}

static void
ring_port_rings(struct fdp__port *port, struct fdp_port_rings *rings)
{
    struct ring_port *rp = ring_port_cast(port);

    rings->umem = fdp__dp_umem(port->dp, &rings->umem_size);
    rings->frame_size = fdp__dp_frame_size(port->dp);
    rings->fill = rp->fill;
    rings->rx = rp->rx;
    rings->tx = rp->tx;
    rings->completion = rp->completion;
}

const struct fdp__port_class fdp__ring_port_class = {
    .type = "ring",
    .open = ring_port_open,
    .close = ring_port_close,
    .rx = ring_port_rx,
    .tx = ring_port_tx,
    .recycle = ring_port_recycle,
    .rings = ring_port_rings,
};

/* ---------------------------------------------------------------------- */
/* Pcap ports.                                                             */

#define PCAP_SNAPLEN 65535

struct pcap_port {
    struct fdp__port up;
    pcap_t *rx;
    pcap_t *tx;                 /* pcap_open_dead() handle for 'dumper'. */
    pcap_dumper_t *dumper;
    char *rx_path, *tx_path;
    unsigned long loops_left;   /* Times to read rx again after this one. */
};

static struct pcap_port *
pcap_port_cast(struct fdp__port *port)
{
    return (struct pcap_port *) port;
}

static void
pcap_port_free(struct pcap_port *pp)
{
    if (pp->dumper) {
        pcap_dump_close(pp->dumper);
    }
    if (pp->tx) {
        pcap_close(pp->tx);
    }
    if (pp->rx) {
        pcap_close(pp->rx);
    }
    free(pp->rx_path);
    free(pp->tx_path);
    free(pp);
}

static int
pcap_port_open_files(struct pcap_port *pp, char **errorp)
{
    char errbuf[PCAP_ERRBUF_SIZE] = "";

    if (pp->rx_path) {
        pp->rx = pcap_open_offline(pp->rx_path, errbuf);
        if (!pp->rx) {
            *errorp = fdp__xasprintf("pcap: rx=%s: %s", pp->rx_path, errbuf);
            return errno ? errno : EINVAL;
        }
        int dlt = pcap_datalink(pp->rx);
        if (dlt != DLT_EN10MB) {
            const char *name = pcap_datalink_val_to_name(dlt);
            *errorp = fdp__xasprintf("pcap: rx=%s: link type %s (%d) is "
                                     "not Ethernet", pp->rx_path,
                                     name ? name : "unknown", dlt);
            return EINVAL;
        }
    }
    if (pp->tx_path) {
        pp->tx = pcap_open_dead(DLT_EN10MB, PCAP_SNAPLEN);
        if (!pp->tx) {
            return ENOMEM;
        }
        pp->dumper = pcap_dump_open(pp->tx, pp->tx_path);
        if (!pp->dumper) {
            *errorp = fdp__xasprintf("pcap: tx=%s: %s", pp->tx_path,
                                     pcap_geterr(pp->tx));
            return errno ? errno : EINVAL;
        }
    }
    return 0;
}

static int
pcap_port_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
               char **errorp)
{
    struct fdp__port_arg known[] = {
        { "rx", NULL }, { "tx", NULL }, { "loop", NULL },
    };
    int error = fdp__port_parse_args("pcap", args, known, 3, errorp);
    struct pcap_port *pp = NULL;
    unsigned long loops = 1;

    (void) dp;
    if (!error && known[2].value) {
        char *end;
        errno = 0;
        loops = strtoul(known[2].value, &end, 10);
        if (errno || *end || loops < 1 || loops > UINT32_MAX
            || !known[0].value || known[2].value[0] == '-') {
            *errorp = fdp__xasprintf("pcap: loop=%s: expected a count from "
                                     "1 to %" PRIu32 " with rx=FILE",
                                     known[2].value, UINT32_MAX);
            error = EINVAL;
        }
    }
    if (!error && !known[0].value && !known[1].value) {
        *errorp = fdp__xasprintf("pcap: needs rx=FILE, tx=FILE or both");
        error = EINVAL;
    }
    if (!error && known[0].value && known[1].value
        && !strcmp(known[0].value, known[1].value)) {
        *errorp = fdp__xasprintf("pcap: rx and tx are the same file (%s): "
                                 "writing would destroy what is read",
                                 known[0].value);
        error = EINVAL;
    }
    if (!error && !(pp = calloc(1, sizeof *pp))) {
        error = ENOMEM;
    }
    free(known[2].value);
    if (error) {
        fdp__port_free_args(known, 2);
        return error;
    }
    pp->rx_path = known[0].value;
    pp->tx_path = known[1].value;
    pp->loops_left = loops - 1;
    errno = 0;
    error = pcap_port_open_files(pp, errorp);
    if (error) {
        pcap_port_free(pp);
        return error;
    }
    *portp = &pp->up;
    return 0;
}

static void
pcap_port_close(struct fdp__port *port)
{
    struct pcap_port *pp = pcap_port_cast(port);

    pcap_port_free(pp);
}

static uint32_t
pcap_port_rx(struct fdp__port *port, struct fdp__frame_cache *cache,
             struct fdp_desc *descs, uint32_t n, bool *eof)
{
    struct pcap_port *pp = pcap_port_cast(port);
    uint32_t frame_size = fdp__dp_frame_size(port->dp);
    uint8_t *umem = fdp__dp_umem(port->dp, NULL);
    uint32_t k = 0;

    *eof = !pp->rx;
    while (pp->rx && k < n) {
        struct pcap_pkthdr *hdr;
        const u_char *data;
        uint64_t frame = fdp__cache_get(cache);
        if (frame == UINT64_MAX) {
            break;              /* No free frame: read the rest later. */
        }
        int r = pcap_next_ex(pp->rx, &hdr, &data);
        if (r != 1) {
            fdp__cache_put(cache, frame);
            if (r == PCAP_ERROR) {
                fdp__count(&port->stats.rx_errors, 1);
                fdp__port_set_error(port, "pcap: rx=%s: %s", pp->rx_path,
                                    pcap_geterr(pp->rx));
            }
            /* End of file (or an unreadable rest): again, or exhausted. */
            pcap_close(pp->rx);
            pp->rx = NULL;
            if (r != PCAP_ERROR && pp->loops_left) {
                char errbuf[PCAP_ERRBUF_SIZE] = "";
                pp->loops_left--;
                pp->rx = pcap_open_offline(pp->rx_path, errbuf);
                if (pp->rx) {
                    continue;
                }
                fdp__count(&port->stats.rx_errors, 1);
                fdp__port_set_error(port, "pcap: rx=%s: %s", pp->rx_path,
                                    errbuf);
            }
            *eof = k == 0;
            break;
        }
        if (hdr->caplen == 0 || hdr->caplen > frame_size - FDP_DP_HEADROOM) {
            fdp__cache_put(cache, frame);
            fdp__count(&port->stats.rx_errors, 1);
            fdp__port_set_error(port, "pcap: rx=%s: a %" PRIu32 "-byte "
                                "packet does not fit a %" PRIu32 "-byte "
                                "frame", pp->rx_path,
                                (uint32_t) hdr->caplen,
                                frame_size - FDP_DP_HEADROOM);
            continue;
        }
        struct fdp__frame_meta *meta = (void *) (umem + frame);
        meta->ts_usec = (int64_t) hdr->ts.tv_sec * 1000000 + hdr->ts.tv_usec;
        memcpy(umem + frame + FDP_DP_HEADROOM, data, hdr->caplen);
        descs[k++] = (struct fdp_desc) {
            .addr = frame + FDP_DP_HEADROOM,
            .len = hdr->caplen,
        };
    }
    return k;
}

static uint32_t
pcap_port_tx(struct fdp__port *port, struct fdp__frame_cache *cache,
             const struct fdp_desc *descs, uint32_t n)
{
    struct pcap_port *pp = pcap_port_cast(port);
    uint32_t frame_size = fdp__dp_frame_size(port->dp);
    uint8_t *umem = fdp__dp_umem(port->dp, NULL);

    for (uint32_t i = 0; i < n; i++) {
        const struct fdp_desc *d = &descs[i];
        if (pp->dumper) {
            uint64_t frame = d->addr & ~(uint64_t) (frame_size - 1);
            const struct fdp__frame_meta *meta = (void *) (umem + frame);
            struct pcap_pkthdr hdr = {
                .ts = { .tv_sec = meta->ts_usec / 1000000,
                        .tv_usec = meta->ts_usec % 1000000 },
                .caplen = d->len,
                .len = d->len,
            };
            pcap_dump((u_char *) pp->dumper, &hdr, umem + d->addr);
        }
        fdp__cache_put(cache, d->addr);
    }
    if (!pp->dumper) {
        return 0;               /* rx only: everything is dropped. */
    }
    return n;
}

const struct fdp__port_class fdp__pcap_port_class = {
    .type = "pcap",
    .open = pcap_port_open,
    .close = pcap_port_close,
    .rx = pcap_port_rx,
    .tx = pcap_port_tx,
};
