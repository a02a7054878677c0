/*
 * AF_XDP ports: "afxdp:dev=IFNAME[,queue=Q][,mode=auto|copy|zc]
 * [,csum=auto|off]".
 *
 * An AF_XDP socket (Linux Documentation/networking/af_xdp.rst) on one
 * queue of an interface, through libxdp (xsk.h).  libxdp attaches its
 * default XDP program to the interface, which redirects every packet of
 * the queue to the socket (bpf_redirect_map() on an XSKMAP keyed by
 * queue); several sockets on one interface share that program.
 *
 * Design
 * ======
 * The UMEM is the datapath's own buffer area (fdp__dp_umem()), registered
 * once per datapath: the first afxdp port creates it (xsk_umem__create()),
 * every other one binds to it with XDP_SHARED_UMEM
 * (xsk_socket__create_shared()) and has its own fill and completion rings,
 * as the kernel requires for a different interface or queue.  So a packet
 * received on one afxdp port and sent on another is never copied: the rx
 * descriptor's frame goes through the datapath and out on the other
 * socket's tx ring, and the completion ring gives it back.
 *
 * Frames are the datapath's: every frame the kernel holds for a port (on
 * its fill ring, in the driver, on its rx, tx or completion ring) is
 * marked with the port's number in the datapath's owner table, as ring
 * ports do (port.c).  rx and the completion ring take frames back only
 * if they carry the port's mark, so a descriptor the kernel should never
 * give (a bug, or a frame of another port) is refused and counted, and
 * close takes back every marked frame once the socket is gone.  The
 * socket that created the UMEM is special: libxdp keeps its file
 * descriptor (still bound to its queue) until the UMEM itself is deleted,
 * so when that port closes before the others its frames are parked
 * (owner PARKED) and come back when the last afxdp port closes; until
 * then its queue cannot be bound again, and a port asking for it is
 * refused with that reason ('parked_ifindex').
 *
 * Frame layout.  The kernel writes a received packet at the frame's start
 * + XDP_PACKET_HEADROOM + the UMEM's frame headroom; with
 * FDP_DP_HEADROOM == XDP_PACKET_HEADROOM the UMEM's headroom is 0 and the
 * packet sits exactly where every datapath packet does, with the frame's
 * first 64 bytes (struct fdp__frame_meta) untouched by the kernel.
 * Frames must be at most a page (aligned UMEM chunks are 2048 or 4096
 * bytes).
 *
 * Wakeups.  Sockets are bound with XDP_USE_NEED_WAKEUP: the kernel sets a
 * flag on a ring when it wants a system call to make progress, and only
 * then does the port make one: sendto() after filling the tx ring (copy
 * mode sends from within that call, 32 descriptors at a time, so recycle
 * kicks again while the tx ring is not empty), recvfrom() after stocking
 * the fill ring.
 *
 * Modes.  mode=zc asks for zero copy with the driver's (native) XDP and
 * fails with the kernel's reason where the driver has none (veth);
 * mode=copy asks for copy mode, native XDP where the driver has it and
 * generic (SKB) XDP otherwise; mode=auto (the default) lets the kernel
 * bind zero copy where it can and copy otherwise, native XDP first and
 * generic second.  Sockets sharing one UMEM share its first socket's copy
 * or zero-copy mode (the kernel binds them so), so a port that asks for
 * the other is refused.
 *
 * Checksums.  A packet that a local sender (a veth peer, by default)
 * left with a partial TCP or UDP checksum for "the hardware" to finish
 * reaches XDP, and so the socket, with the checksum unfilled, and nothing
 * tells the port so: XDP's rx metadata (bpf_xdp_metadata_rx_*()) has a
 * timestamp, a hash and a VLAN tag, no checksum status (Linux 6.1 to
 * 6.18), and veth offers none of it in 6.1.  With csum=auto (the default) rx completes
 * the checksums that look partial from the bytes alone
 * (fdp__csum_complete_guess(), port-offload.c: the field holds exactly
 * the pseudo-header sum and the checksum does not verify); a checksum
 * that verifies is never touched.  It costs a pseudo-header sum per TCP
 * or UDP packet, and a sum over the segment for the partial ones only.
 * The risk: a packet corrupted on the way whose field happens to equal
 * its pseudo-header sum (1 in 65536 corrupted packets) leaves repaired.
 * csum=off forwards every packet as received (for a port whose senders
 * never offload, or a datapath that must not touch checksums).  GSO
 * super-packets do not reach XDP: attaching the program turns GSO off on
 * a veth's peer, and native drivers run XDP before GRO.
 *
 * Thread-safety.  open and close run under the datapath's control mutex
 * and the module's 'umems_mutex' (the UMEM registry and libbpf's print
 * hook are global).  rx and recycle run on the port's polling pmd; tx
 * under the port's tx_mutex from any pmd.  The tx ring's producer is
 * written by tx only; recycle reads it (atomically) to decide on a kick.
 */
#include <config.h>

#include "datapath/dp-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "lib/util.h"
#include "datapath/port-offload.h"

#ifdef HAVE_XDP

#include <fcntl.h>
#include <inttypes.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdarg.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

/* Ring sizes (descriptors, powers of two).  A port holds at most
 * fill + rx + tx + completion frames; 4 x 1024 out of the default 16384
 * leaves room for several ports and the pmds' caches. */
#define AFXDP_RING_SIZE 1024u
/* How many frames a port keeps on its fill ring: the whole ring, but not
 * more than an eighth of the datapath's frames, so that a small buffer
 * area still has frames for other ports, the pmds' caches and copies
 * (1024 of the default 16384). */
#define AFXDP_FILL_SHARE 8
/* Owner-table mark of a frame parked with a closed port's socket until
 * the UMEM is deleted; port numbers stop below FDP_PORT_MAX. */
#define PARKED UINT32_MAX

static_assert(FDP_DP_HEADROOM >= XDP_PACKET_HEADROOM,
              "the kernel's XDP headroom fits the datapath's");

/* One registered UMEM per datapath with afxdp ports. */
struct afxdp_umem {
    struct afxdp_umem *next;
    const struct fdp_dp *dp;
    struct xsk_umem *umem;
    /* The UMEM's own fill and completion rings, which libxdp gives to the
     * first socket. */
    struct xsk_ring_prod fill;
    struct xsk_ring_cons comp;
    struct afxdp_port *ports;   /* Sockets bound to it. */
    /* The queue the first socket, whose descriptor is the UMEM's, stays
     * bound to after its port closed, or 0 if that port is open. */
    unsigned int parked_ifindex;
    uint32_t parked_queue;
};

struct afxdp_port {
    struct fdp__port up;
    struct fdp_dp *dp;
    struct afxdp_port *next;    /* In umem->ports. */
    struct afxdp_umem *umem;
    char *dev;
    unsigned int ifindex;       /* In 'netns'. */
    int netns_fd;               /* The network namespace the port was
                                 * opened in, or -1. */
    uint32_t queue;
    struct xsk_socket *xsk;
    int fd;
    struct xsk_ring_cons rx;
    struct xsk_ring_prod tx;
    struct xsk_ring_prod own_fill;
    struct xsk_ring_cons own_comp;
    struct xsk_ring_prod *fill;     /* own_fill, or umem->fill. */
    struct xsk_ring_cons *comp;
    bool zero_copy;
    const char *xdp_mode;       /* "native" or "generic". */
    char description[128];      /* For fdp_dp_port_describe(). */
    bool csum_auto;             /* csum=auto: complete partial checksums. */
    uint64_t n_csum;            /* How many (relaxed atomic). */

    /* The kernel's counters (XDP_STATISTICS) as last read, by recycle. */
    uint32_t recycles;
    struct xdp_statistics kstats;
};

/* How often recycle reads the kernel's counters: every this many polls
 * (one system call; at the idle pmd's 50 us naps, some 20 times a
 * second). */
#define STATS_INTERVAL 1024

static pthread_mutex_t umems_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct afxdp_umem *umems;

/* ---------------------------------------------------------------------- */
/* libbpf's and libxdp's messages: kept, not printed (the library never
 * prints), so that an error can quote the kernel's own words.            */

static char last_message[256];      /* Under umems_mutex. */

static void
keep_message(const char *format, va_list args)
{
    char msg[sizeof last_message];
    size_t n;

    vsnprintf(msg, sizeof msg, format, args);
    n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) {
        msg[--n] = '\0';
    }
    if (n) {
        memcpy(last_message, msg, n + 1);
    }
}

static int
keep_libbpf_message(enum libbpf_print_level level, const char *format,
                    va_list args)
{
    if (level == LIBBPF_WARN) {
        keep_message(format, args);
    }
    return 0;
}

static int
keep_libxdp_message(enum libxdp_print_level level, const char *format,
                    va_list args)
{
    if (level == LIBXDP_WARN) {
        keep_message(format, args);
    }
    return 0;
}

struct saved_print {
    libbpf_print_fn_t libbpf;
    libxdp_print_fn_t libxdp;
};

static struct saved_print
capture_messages(void)
{
    last_message[0] = '\0';
    return (struct saved_print) {
        .libbpf = libbpf_set_print(keep_libbpf_message),
        .libxdp = libxdp_set_print(keep_libxdp_message),
    };
}

static void
restore_messages(struct saved_print saved)
{
    libbpf_set_print(saved.libbpf);
    libxdp_set_print(saved.libxdp);
}

/* ---------------------------------------------------------------------- */
/* The shared UMEM.                                                        */

static struct afxdp_umem *
umem_find(const struct fdp_dp *dp)
{
    for (struct afxdp_umem *u = umems; u; u = u->next) {
        if (u->dp == dp) {
            return u;
        }
    }
    return NULL;
}

/* Registers the datapath's buffer area as a UMEM.  Under umems_mutex. */
static int
umem_create(struct fdp_dp *dp, const char *dev, struct afxdp_umem **up,
            char **errorp)
{
    uint64_t size;
    void *area = fdp__dp_umem(dp, &size);
    struct xsk_umem_config config = {
        .fill_size = AFXDP_RING_SIZE,
        .comp_size = AFXDP_RING_SIZE,
        .frame_size = fdp__dp_frame_size(dp),
        .frame_headroom = FDP_DP_HEADROOM - XDP_PACKET_HEADROOM,
        .flags = 0,
    };
    struct afxdp_umem *u = calloc(1, sizeof *u);

    if (!u) {
        return ENOMEM;
    }
    int error = -xsk_umem__create(&u->umem, area, size, &u->fill, &u->comp,
                                  &config);
    if (error) {
        *errorp = fdp__xasprintf("afxdp: dev=%s: registering the datapath's "
                                 "%" PRIu64 "-byte buffer area as a UMEM: "
                                 "%s%s", dev, size, strerror(error),
                                 error == EPERM
                                 ? " (needs CAP_NET_RAW, and CAP_IPC_LOCK "
                                   "or a large enough RLIMIT_MEMLOCK to "
                                   "pin it)" : "");
        free(u);
        return error;
    }
    u->dp = dp;
    u->next = umems;
    umems = u;
    *up = u;
    return 0;
}

/* Gives every frame marked 'mark' back to the datapath's pool. */
static void
reclaim_frames(struct fdp_dp *dp, uint32_t mark)
{
    uint32_t *owner = fdp__dp_frame_owner(dp);
    uint32_t frame_size = fdp__dp_frame_size(dp);
    struct fdp__frame_cache cache;
    uint64_t umem_size;

    fdp__dp_umem(dp, &umem_size);
    fdp__cache_init(&cache, fdp__dp_pool(dp));
    for (uint64_t i = 0; i < umem_size / frame_size; i++) {
        if (owner[i] == mark) {
            owner[i] = 0;
            fdp__cache_put(&cache, i * frame_size);
        }
    }
    fdp__cache_flush(&cache);
}

/* Deletes 'u' if no socket uses it any more.  Under umems_mutex. */
static void
umem_release(struct fdp_dp *dp, struct afxdp_umem *u)
{
    if (u->ports) {
        return;
    }
    for (struct afxdp_umem **p = &umems; *p; p = &(*p)->next) {
        if (*p == u) {
            *p = u->next;
            break;
        }
    }
    xsk_umem__delete(u->umem);  /* Closes the first socket's descriptor. */
    reclaim_frames(dp, PARKED);
    free(u);
}

/* ---------------------------------------------------------------------- */
/* Opening.                                                                */

enum afxdp_mode { MODE_AUTO, MODE_COPY, MODE_ZC };

static const char *const mode_names[] = { "auto", "copy", "zc" };

/* How many queues 'dev' has, or 0 if the driver does not say. */
static uint32_t
device_queues(const char *dev)
{
    struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    uint32_t n = 0;

    if (fd < 0) {
        return 0;
    }
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", dev);
    ifr.ifr_data = (void *) &ch;
    if (!ioctl(fd, SIOCETHTOOL, &ifr)) {
        n = (ch.rx_count > ch.tx_count ? ch.rx_count : ch.tx_count)
            + ch.combined_count;
    }
    close(fd);
    return n;
}

static int
parse_options(const char *args, char **devp, uint32_t *queuep,
              enum afxdp_mode *modep, bool *csum_autop, char **errorp)
{
    struct fdp__port_arg known[] = {
        { "dev", NULL }, { "queue", NULL }, { "mode", NULL },
        { "csum", NULL },
    };
    int error = fdp__port_parse_args("afxdp", args, known, 4, errorp);

    *queuep = 0;
    *modep = MODE_AUTO;
    *csum_autop = true;
    if (!error && !known[0].value) {
        *errorp = fdp__xasprintf("afxdp: needs dev=IFNAME");
        error = EINVAL;
    }
    if (!error && known[1].value) {
        char *end;
        errno = 0;
        unsigned long q = strtoul(known[1].value, &end, 10);
        if (errno || *end || known[1].value[0] == '-' || q > UINT32_MAX - 1) {
            *errorp = fdp__xasprintf("afxdp: dev=%s: queue=%s is not a "
                                     "queue number", known[0].value,
                                     known[1].value);
            error = EINVAL;
        }
        *queuep = (uint32_t) q;
    }
    if (!error && known[2].value) {
        size_t i;
        for (i = 0; i < FDP_ARRAY_SIZE(mode_names); i++) {
            if (!strcmp(known[2].value, mode_names[i])) {
                break;
            }
        }
        if (i == FDP_ARRAY_SIZE(mode_names)) {
            *errorp = fdp__xasprintf("afxdp: dev=%s: mode=%s: expected "
                                     "auto, copy or zc", known[0].value,
                                     known[2].value);
            error = EINVAL;
        }
        *modep = (enum afxdp_mode) i;
    }
    if (!error && known[3].value) {
        if (!strcmp(known[3].value, "off")) {
            *csum_autop = false;
        } else if (strcmp(known[3].value, "auto")) {
            *errorp = fdp__xasprintf("afxdp: dev=%s: csum=%s: expected auto "
                                     "or off", known[0].value,
                                     known[3].value);
            error = EINVAL;
        }
    }
    if (!error) {
        *devp = known[0].value;
        known[0].value = NULL;
    }
    fdp__port_free_args(known, 4);
    return error;
}

/* One attempt at a socket on 'ap->dev' with 'xdp_flags' and 'bind_flags';
 * on failure, '*reason' says why in the kernel's (or libxdp's) words.
 * Under umems_mutex. */
static int
try_socket(struct afxdp_port *ap, uint32_t xdp_flags, uint16_t bind_flags,
           char **errorp, char **reason)
{
    struct afxdp_umem *u = umem_find(ap->dp);
    struct xsk_socket_config config = {
        .rx_size = AFXDP_RING_SIZE,
        .tx_size = AFXDP_RING_SIZE,
        .xdp_flags = xdp_flags,
        .bind_flags = bind_flags | XDP_USE_NEED_WAKEUP,
    };
    int error;

    if (!u) {
        error = umem_create(ap->dp, ap->dev, &u, errorp);
        if (error) {
            return error;
        }
    }
    /* The first socket takes over the UMEM's own rings (libxdp copies
     * them for any other pointers, and unmaps them if that socket then
     * fails); every later one gets rings of its own. */
    ap->fill = u->ports ? &ap->own_fill : &u->fill;
    ap->comp = u->ports ? &ap->own_comp : &u->comp;

    struct saved_print saved = capture_messages();
    error = -xsk_socket__create_shared(&ap->xsk, ap->dev, ap->queue,
                                       u->umem, &ap->rx, &ap->tx, ap->fill,
                                       ap->comp, &config);
    restore_messages(saved);
    if (error) {
        const char *hint = error == EBUSY
                           ? " (another AF_XDP socket has the queue)"
                           : error == EINVAL && ap->queue
                           ? " (is the queue in range? the driver does not "
                             "say how many it has)" : "";
        *reason = last_message[0]
                  ? fdp__xasprintf("%s (%s)%s", strerror(error),
                                   last_message, hint)
                  : fdp__xasprintf("%s%s", strerror(error), hint);
        ap->xsk = NULL;
        umem_release(ap->dp, u);    /* A failed first socket: start over. */
        return error;
    }
    ap->umem = u;
    ap->fd = xsk_socket__fd(ap->xsk);
    ap->next = u->ports;
    u->ports = ap;
    return 0;
}

/* Whether the bound socket 'ap' is in zero-copy mode. */
static bool
socket_zero_copy(const struct afxdp_port *ap)
{
    struct xdp_options opts = { 0 };
    socklen_t len = sizeof opts;

    return !getsockopt(ap->fd, SOL_XDP, XDP_OPTIONS, &opts, &len)
           && (opts.flags & XDP_OPTIONS_ZEROCOPY);
}

/* Records which XDP program libxdp attached (or found) on the interface,
 * in which mode, and the socket's copy or zero-copy mode. */
static void
record_program(struct afxdp_port *ap)
{
    struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(
        (int) ap->ifindex);
    const char *name = "?";
    uint32_t id = 0;
    enum xdp_attach_mode mode = XDP_MODE_UNSPEC;

    if (mp && !libxdp_get_error(mp)) {
        /* A dispatcher runs the programs in order; libxdp's is among
         * them.  Without one, the program is the main one. */
        struct xdp_program *prog = xdp_multiprog__is_legacy(mp)
                                   ? xdp_multiprog__main_prog(mp)
                                   : xdp_multiprog__next_prog(NULL, mp);
        if (prog) {
            name = xdp_program__name(prog);
            id = xdp_program__id(prog);
        }
        mode = xdp_multiprog__attach_mode(mp);
        snprintf(ap->description, sizeof ap->description,
                 "XDP program %s (id %" PRIu32 ")%s, %s mode; %s", name, id,
                 xdp_multiprog__is_legacy(mp) ? "" : " under a dispatcher",
                 mode == XDP_MODE_NATIVE ? "native"
                 : mode == XDP_MODE_SKB ? "generic"
                 : mode == XDP_MODE_HW ? "offloaded" : ap->xdp_mode,
                 ap->zero_copy ? "zero copy" : "copy");
        xdp_multiprog__close(mp);
    } else {
        snprintf(ap->description, sizeof ap->description,
                 "XDP %s mode; %s", ap->xdp_mode,
                 ap->zero_copy ? "zero copy" : "copy");
    }
}

static void afxdp_destroy(struct afxdp_port *);

/* Binds the socket in 'mode': native XDP, then (not for zc) generic. */
static int
afxdp_bind(struct afxdp_port *ap, enum afxdp_mode mode, char **errorp)
{
    uint16_t bind_flags = mode == MODE_ZC ? XDP_ZEROCOPY
                          : mode == MODE_COPY ? XDP_COPY : 0;
    char *native = NULL, *generic = NULL;
    int error = try_socket(ap, XDP_FLAGS_DRV_MODE, bind_flags, errorp,
                           &native);

    ap->xdp_mode = "native";
    /* The kernel lets go of the failed socket's queue in deferred work
     * after close(): until then binding the queue again is EBUSY.  Try
     * for up to GENERIC_RETRIES x 2 ms. */
    enum { GENERIC_RETRIES = 100 };
    for (int i = 0; error && !*errorp && mode != MODE_ZC
                    && i < GENERIC_RETRIES && (!i || error == EBUSY); i++) {
        if (i) {
            struct timespec nap = { 0, 2 * 1000 * 1000 };
            nanosleep(&nap, NULL);
        }
        free(generic);
        generic = NULL;
        error = try_socket(ap, XDP_FLAGS_SKB_MODE,
                           mode == MODE_AUTO ? XDP_COPY : bind_flags,
                           errorp, &generic);
        ap->xdp_mode = "generic";
    }
    if (error && !*errorp) {
        if (mode == MODE_ZC) {
            *errorp = fdp__xasprintf("afxdp: dev=%s,queue=%" PRIu32 ": zero "
                                     "copy: %s%s", ap->dev, ap->queue,
                                     native,
                                     error == EOPNOTSUPP
                                     ? "; the driver has no zero-copy AF_XDP "
                                       "(use mode=copy or mode=auto)" : "");
        } else {
            *errorp = fdp__xasprintf("afxdp: dev=%s,queue=%" PRIu32 ": "
                                     "native XDP: %s; generic XDP: %s",
                                     ap->dev, ap->queue, native, generic);
        }
    }
    free(native);
    free(generic);
    if (error) {
        return error;
    }

    ap->zero_copy = socket_zero_copy(ap);
    if ((mode == MODE_ZC && !ap->zero_copy)
        || (mode == MODE_COPY && ap->zero_copy)) {
        *errorp = fdp__xasprintf("afxdp: dev=%s: mode=%s, but the "
                                 "datapath's UMEM is shared in %s mode (the "
                                 "first afxdp port's); every afxdp port of "
                                 "a datapath has the same mode", ap->dev,
                                 mode_names[mode],
                                 ap->zero_copy ? "zero-copy" : "copy");
        return EINVAL;
    }
    struct saved_print saved = capture_messages();
    record_program(ap);
    restore_messages(saved);
    return 0;
}

static int
afxdp_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
           char **errorp)
{
    enum afxdp_mode mode;
    unsigned int ifindex;
    uint32_t queue, n_queues;
    char *dev = NULL;
    bool csum_auto;
    int error = parse_options(args, &dev, &queue, &mode, &csum_auto,
                              errorp);

    if (!error) {
        error = fdp__port_ifindex("afxdp", dev, &ifindex, errorp);
    }
    if (!error && fdp__dp_frame_size(dp) > 4096) {
        *errorp = fdp__xasprintf("afxdp: dev=%s: the datapath's %" PRIu32
                                 "-byte frames are larger than AF_XDP's "
                                 "largest (a 4096-byte page)", dev,
                                 fdp__dp_frame_size(dp));
        error = EINVAL;
    }
    if (!error && (n_queues = device_queues(dev)) && queue >= n_queues) {
        *errorp = fdp__xasprintf("afxdp: dev=%s: queue=%" PRIu32 " is out "
                                 "of range (the device has %" PRIu32 " "
                                 "queue%s)", dev, queue, n_queues,
                                 n_queues == 1 ? "" : "s");
        error = EINVAL;
    }
    if (error) {
        free(dev);
        return error;
    }

    struct afxdp_port *ap = calloc(1, sizeof *ap);
    if (!ap) {
        free(dev);
        return ENOMEM;
    }
    ap->dp = dp;
    ap->dev = dev;
    ap->ifindex = ifindex;
    ap->queue = queue;
    ap->csum_auto = csum_auto;
    ap->fd = -1;
    /* The interface index means something only in this namespace, and
     * libxdp detaches its program by index when the socket goes: see
     * enter_port_netns(). */
    ap->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

    pthread_mutex_lock(&umems_mutex);
    struct afxdp_umem *u = umem_find(dp);
    for (struct afxdp_port *other = u ? u->ports : NULL; other;
         other = other->next) {
        if (other->ifindex == ifindex && other->queue == queue) {
            *errorp = fdp__xasprintf("afxdp: dev=%s,queue=%" PRIu32 ": "
                                     "another port of this datapath has "
                                     "that queue", dev, queue);
            error = EBUSY;
        }
    }
    if (!error && u && u->parked_ifindex == ifindex
        && u->parked_queue == queue) {
        *errorp = fdp__xasprintf("afxdp: dev=%s,queue=%" PRIu32 ": the "
                                 "datapath's UMEM still holds that queue "
                                 "(its first afxdp port was there); the "
                                 "kernel lets it go when the last afxdp "
                                 "port of the datapath closes", dev, queue);
        error = EBUSY;
    }
    if (!error) {
        error = afxdp_bind(ap, mode, errorp);
    }
    if (error) {
        afxdp_destroy(ap);
    }
    pthread_mutex_unlock(&umems_mutex);
    if (error) {
        return error;
    }
    *portp = &ap->up;
    return 0;
}

/* The port's network namespace, entered by the calling thread if it is in
 * another one.  libxdp's xsk_socket__delete() removes the XDP program it
 * attached by interface index, through netlink, in the calling thread's
 * namespace: a datapath closed from another namespace than the one its
 * ports were opened in (a daemon's control thread, flowdp-bench's main
 * thread) would leave the program on the port's interface, and could
 * take another program off whatever interface has that index where the
 * thread is.  Returns the thread's own namespace to go back to with
 * leave_port_netns(), or -1 if it was already in the port's (or the
 * kernel refused: then the deletion runs where the thread is). */
static int
enter_port_netns(const struct afxdp_port *ap)
{
    struct stat mine, theirs;

    if (ap->netns_fd < 0) {
        return -1;
    }
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0 || fstat(self, &mine) || fstat(ap->netns_fd, &theirs)
        || (mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino)
        || setns(ap->netns_fd, CLONE_NEWNET)) {
        if (self >= 0) {
            close(self);
        }
        return -1;
    }
    return self;
}

static void
leave_port_netns(int self)
{
    if (self >= 0) {
        if (setns(self, CLONE_NEWNET)) {
            /* Cannot happen: the thread was there a moment ago. */
            abort();
        }
        close(self);
    }
}

/* Deletes the socket and gives back its frames.  Under umems_mutex. */
static void
afxdp_destroy(struct afxdp_port *ap)
{
    struct afxdp_umem *u = ap->umem;

    if (ap->xsk) {
        bool holds_umem_fd = ap->fd == xsk_umem__fd(u->umem);
        struct saved_print saved = capture_messages();
        int self = enter_port_netns(ap);
        xsk_socket__delete(ap->xsk);
        leave_port_netns(self);
        restore_messages(saved);
        for (struct afxdp_port **p = &u->ports; *p; p = &(*p)->next) {
            if (*p == ap) {
                *p = ap->next;
                break;
            }
        }
        uint32_t port_no = ap->up.port_no;
        if (holds_umem_fd && u->ports && !port_no) {
            u->parked_ifindex = ap->ifindex;
            u->parked_queue = ap->queue;
        }
        if (port_no) {
            /* No port number: closed before the datapath numbered it,
             * so it never stocked a frame. */
            if (holds_umem_fd && u->ports) {
                u->parked_ifindex = ap->ifindex;
                u->parked_queue = ap->queue;
                uint32_t *owner = fdp__dp_frame_owner(ap->dp);
                uint32_t frame_size = fdp__dp_frame_size(ap->dp);
                uint64_t umem_size;
                fdp__dp_umem(ap->dp, &umem_size);
                for (uint64_t i = 0; i < umem_size / frame_size; i++) {
                    if (owner[i] == port_no) {
                        owner[i] = PARKED;
                    }
                }
            } else {
                reclaim_frames(ap->dp, port_no);
            }
        }
        umem_release(ap->dp, u);
    }
    if (ap->netns_fd >= 0) {
        close(ap->netns_fd);
    }
    free(ap->dev);
    free(ap);
}

static void
afxdp_close(struct fdp__port *port)
{
    pthread_mutex_lock(&umems_mutex);
    afxdp_destroy((struct afxdp_port *) port);
    pthread_mutex_unlock(&umems_mutex);
}

/* ---------------------------------------------------------------------- */
/* The packet path.                                                        */

/* What the kernel gave back. */
enum take { NOT_OURS, TAKEN, TAKEN_BAD };

/* Takes back the frame of 'addr' from the kernel if it holds it for this
 * port (TAKEN, or TAKEN_BAD if it was to hold a packet of 'len' bytes
 * that does not fit); NOT_OURS, counted and reported, if not. */
static enum take
take_frame(struct afxdp_port *ap, uint64_t addr, uint32_t len,
           bool need_packet)
{
    uint32_t frame_size = fdp__dp_frame_size(ap->dp);
    uint32_t *owner = fdp__dp_frame_owner(ap->dp);
    uint64_t offset = addr & (frame_size - 1);
    uint64_t umem_size;

    fdp__dp_umem(ap->dp, &umem_size);
    if (addr >= umem_size || owner[addr / frame_size] != ap->up.port_no) {
        fdp__count(&ap->up.stats.rx_errors, 1);
        fdp__port_set_error(&ap->up, "afxdp: dev=%s: the kernel gave back "
                            "a frame this port did not give it (addr %#"
                            PRIx64 ")", ap->dev, addr);
        return NOT_OURS;
    }
    owner[addr / frame_size] = 0;
    if (need_packet && (offset < FDP__FRAME_META_SIZE || len == 0
                        || len > frame_size - offset)) {
        fdp__count(&ap->up.stats.rx_errors, 1);
        fdp__port_set_error(&ap->up, "afxdp: dev=%s: the kernel gave a "
                            "packet outside its frame (addr %#" PRIx64
                            ", len %" PRIu32 ")", ap->dev, addr, len);
        return TAKEN_BAD;
    }
    return TAKEN;
}

static uint32_t
afxdp_rx(struct fdp__port *port, struct fdp__frame_cache *cache,
         struct fdp_desc *descs, uint32_t n, bool *eof)
{
    struct afxdp_port *ap = (struct afxdp_port *) port;
    uint8_t *umem = fdp__dp_umem(ap->dp, NULL);
    uint32_t frame_size = fdp__dp_frame_size(ap->dp);
    uint32_t idx, got, k = 0;

    *eof = false;
    got = xsk_ring_cons__peek(&ap->rx, n, &idx);
    if (!got) {
        return 0;
    }

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t ts_usec = (int64_t) now.tv_sec * 1000000 + now.tv_nsec / 1000;
    for (uint32_t i = 0; i < got; i++) {
        const struct xdp_desc *d = xsk_ring_cons__rx_desc(&ap->rx, idx + i);
        uint64_t addr = d->addr;
        uint32_t len = d->len;
        enum take t = take_frame(ap, addr, len, true);
        if (t != TAKEN) {
            if (t == TAKEN_BAD) {
                fdp__cache_put(cache, addr);
            }
            continue;
        }
        struct fdp__frame_meta *meta
            = (void *) (umem + (addr & ~(uint64_t) (frame_size - 1)));
        meta->ts_usec = ts_usec;
        if (ap->csum_auto && fdp__csum_complete_guess(umem + addr, len)) {
            fdp__count(&ap->n_csum, 1);
        }
        descs[k++] = (struct fdp_desc) { .addr = addr, .len = len };
    }
    xsk_ring_cons__release(&ap->rx, got);
    return k;
}

/* Makes the kernel send what the tx ring holds, if it asked for that. */
static void
tx_kick(struct afxdp_port *ap)
{
    if (xsk_ring_prod__needs_wakeup(&ap->tx)
        && sendto(ap->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
        int error = errno;
        /* EAGAIN: more to send (copy mode sends 32 per call) or the
         * completion ring is full; EBUSY: another thread is sending;
         * ENOBUFS: no memory for now.  Recycle tries again. */
        if (error != EAGAIN && error != EBUSY && error != ENOBUFS
            && error != EINTR) {
            fdp__port_set_error(&ap->up, "afxdp: dev=%s: sendto: %s",
                                ap->dev, strerror(error));
        }
    }
}

static uint32_t
afxdp_tx(struct fdp__port *port, struct fdp__frame_cache *cache,
         const struct fdp_desc *descs, uint32_t n)
{
    struct afxdp_port *ap = (struct afxdp_port *) port;
    uint32_t frame_size = fdp__dp_frame_size(ap->dp);
    uint32_t *owner = fdp__dp_frame_owner(ap->dp);
    uint32_t idx, room = xsk_prod_nb_free(&ap->tx, n);

    if (room > n) {
        room = n;
    }
    if (room && xsk_ring_prod__reserve(&ap->tx, room, &idx) == room) {
        for (uint32_t i = 0; i < room; i++) {
            struct xdp_desc *d = xsk_ring_prod__tx_desc(&ap->tx, idx + i);
            owner[descs[i].addr / frame_size] = ap->up.port_no;
            d->addr = descs[i].addr;
            d->len = descs[i].len;
            d->options = 0;
        }
        xsk_ring_prod__submit(&ap->tx, room);
        tx_kick(ap);
    } else {
        room = 0;
    }
    for (uint32_t i = room; i < n; i++) {
        fdp__cache_put(cache, descs[i].addr);
    }
    return room;
}

/* Adds what the kernel dropped since the last read to the port's
 * rx_errors: packets for which the rx ring was full, or that it could not
 * put in a frame.  Descriptors it refused on tx are reported: their frames
 * come back only when the port closes (the kernel completes them never). */
static void
read_kernel_stats(struct afxdp_port *ap)
{
    struct xdp_statistics now = { 0 };
    socklen_t len = sizeof now;

    if (getsockopt(ap->fd, SOL_XDP, XDP_STATISTICS, &now, &len) < 0) {
        return;
    }
    uint64_t dropped = (now.rx_dropped - ap->kstats.rx_dropped)
                       + (now.rx_ring_full - ap->kstats.rx_ring_full)
                       + (now.rx_invalid_descs - ap->kstats.rx_invalid_descs);
    if (dropped) {
        fdp__count(&ap->up.stats.rx_errors, dropped);
        fdp__port_set_error(&ap->up, "afxdp: dev=%s: the kernel dropped %"
                            PRIu64 " packets (rx ring full %" PRIu64 ", "
                            "no frame or too big %" PRIu64 ", so far)",
                            ap->dev, dropped, (uint64_t) now.rx_ring_full,
                            (uint64_t) now.rx_dropped);
    }
    if (now.tx_invalid_descs != ap->kstats.tx_invalid_descs) {
        fdp__port_set_error(&ap->up, "afxdp: dev=%s: the kernel refused %"
                            PRIu64 " tx descriptors so far", ap->dev,
                            (uint64_t) now.tx_invalid_descs);
    }
    ap->kstats = now;
}

/* Completed frames back to the pool; the fill ring stocked; the kernel
 * woken for either ring if it asked; now and then, the kernel's drop
 * counters. */
static void
afxdp_recycle(struct fdp__port *port, struct fdp__frame_cache *cache)
{
    struct afxdp_port *ap = (struct afxdp_port *) port;
    uint32_t frame_size = fdp__dp_frame_size(ap->dp);
    uint32_t *owner = fdp__dp_frame_owner(ap->dp);
    uint32_t idx, n;

    /* Completions. */
    n = xsk_ring_cons__peek(ap->comp, AFXDP_RING_SIZE, &idx);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t addr = *xsk_ring_cons__comp_addr(ap->comp, idx + i);
        if (take_frame(ap, addr, 0, false) == TAKEN) {
            fdp__cache_put(cache, addr);
        }
    }
    xsk_ring_cons__release(ap->comp, n);

    /* The tx ring not yet drained (copy mode: 32 per system call). */
    if (__atomic_load_n(ap->tx.consumer, __ATOMIC_ACQUIRE)
        != __atomic_load_n(ap->tx.producer, __ATOMIC_ACQUIRE)) {
        tx_kick(ap);
    }

    /* The fill ring, topped up to its share: every frame the kernel
     * took since the last poll is replaced at once, so a burst finds the
     * ring as deep as before (the first call, when the port is added,
     * stocks it all). */
    uint64_t umem_size;
    fdp__dp_umem(ap->dp, &umem_size);
    uint32_t target = (uint32_t) (umem_size / frame_size / AFXDP_FILL_SHARE);
    if (target > AFXDP_RING_SIZE) {
        target = AFXDP_RING_SIZE;
    }
    uint32_t held = AFXDP_RING_SIZE - xsk_prod_nb_free(ap->fill,
                                                       AFXDP_RING_SIZE);
    n = held < target ? target - held : 0;
    if (n && xsk_ring_prod__reserve(ap->fill, n, &idx) == n) {
        uint32_t i;
        for (i = 0; i < n; i++) {
            uint64_t frame = fdp__cache_get(cache);
            if (frame == UINT64_MAX) {
                break;
            }
            owner[frame / frame_size] = ap->up.port_no;
            *xsk_ring_prod__fill_addr(ap->fill, idx + i) = frame;
        }
        /* The ring's producer index moves only by what was written: the
         * unfilled reservations are taken back. */
        ap->fill->cached_prod -= n - i;
        xsk_ring_prod__submit(ap->fill, i);
    }
    if (xsk_ring_prod__needs_wakeup(ap->fill)) {
        recvfrom(ap->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
    }
    if (!(++ap->recycles % STATS_INTERVAL)) {
        read_kernel_stats(ap);
    }
}

static void
afxdp_describe(const struct fdp__port *port, char *buf, size_t size)
{
    const struct afxdp_port *ap = (const struct afxdp_port *) port;

    if (ap->csum_auto) {
        snprintf(buf, size, "%s; %" PRIu64 " partial checksums completed",
                 ap->description, fdp__read_count(&ap->n_csum));
    } else {
        snprintf(buf, size, "%s; checksums as received", ap->description);
    }
}

const struct fdp__port_class fdp__afxdp_port_class = {
    .type = "afxdp",
    .open = afxdp_open,
    .close = afxdp_close,
    .rx = afxdp_rx,
    .tx = afxdp_tx,
    .recycle = afxdp_recycle,
    .describe = afxdp_describe,
};

#else  /* !HAVE_XDP */

/* Built without libxdp: the type is known, so that a spec naming it gets
 * a reason rather than "not a port type". */
static int
afxdp_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
           char **errorp)
{
    (void) dp;
    (void) args;
    (void) portp;
    *errorp = fdp__xasprintf("afxdp: flowdp was built without libxdp "
                             "(install libxdp-dev and libbpf-dev and run "
                             "configure again); afpacket:dev=IFNAME needs "
                             "neither");
    return EOPNOTSUPP;
}

static void
afxdp_close(struct fdp__port *port)
{
    free(port);
}

const struct fdp__port_class fdp__afxdp_port_class = {
    .type = "afxdp",
    .open = afxdp_open,
    .close = afxdp_close,
    .rx = fdp__port_rx_none,
    .tx = fdp__port_tx_drop,
};

#endif /* HAVE_XDP */
