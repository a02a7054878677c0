/*
 * flowdpd's packet-ins: packets the datapath hands up (the controller
 * action, and table misses) become OpenFlow packet-in messages to the
 * connections that want them.
 *
 * Theory of operation.  The datapath calls the upcall callback on a pmd
 * thread, inside an RCU read section, and it must not block (datapath.h).
 * So the callback only copies the packet (at most PIN_MAX_DATA bytes of it)
 * into a bounded ring under a mutex held for that copy, and wakes the main
 * thread through an eventfd that the poll loop watches; a full ring drops
 * the packet and counts it.  Before even that, two flags the main thread
 * keeps (does any connection want packet-ins from the controller action,
 * and from misses?) let the callback return at once when no one listens,
 * which is the common case of a daemon with no controller.
 *
 * The main thread drains the ring (pin_run()) and, for each packet, sends
 * a packet-in in each receiving connection's version, through
 * ofconn_send_async(), which drops and counts it if that connection's
 * queue is over its limit: a slow controller costs the others nothing.
 *
 * Who receives (as Open vSwitch's connmgr): an active connection that is
 * not a slave; a service connection (one accepted on a listener, such as
 * ovs-ofctl monitor's) only once it set a nonzero miss_send_len; a
 * controller action with id=N only the connections whose controller id
 * is N.  Misses go only to OpenFlow 1.0 connections (OpenFlow 1.3 and
 * later drop a table miss unless a flow sends it to the controller, as
 * Open vSwitch's default table-miss behaviour does), with at most
 * miss_send_len bytes of the packet.
 *
 * What a packet-in carries: the reason, the in_port (OpenFlow 1.3+: as
 * an OXM match with in_port only), the packet, buffer_id none.  The table
 * and the cookie of the flow that sent the packet are not known to the
 * upcall: a packet-in says table 0 and cookie 0xffffffffffffffff.
 * Nicira's NXT_PACKET_IN2 (userdata, continuations) is not sent.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "utilities/flowdpd.h"
#include "utilities/flowdpd-openflow.h"
#include "utilities/tool.h"

/* Packets queued at most (a burst of a tenth of a second at 10k
 * packet-ins a second), and the bytes of each kept: an Ethernet frame of
 * a standard MTU and its VLAN tags. */
#define PIN_RING 1024
#define PIN_MAX_DATA 1536

struct pin_entry {
    uint8_t kind;               /* FDP_UPCALL_MISS or _ACTION. */
    uint8_t ofp_reason;
    uint16_t controller_id;
    uint32_t in_port;
    uint32_t total_len;         /* The packet's size as it came. */
    uint16_t len;               /* Bytes of 'data' kept. */
    uint8_t data[PIN_MAX_DATA];
};

struct pin_queue {
    pthread_mutex_t mutex;
    struct pin_entry *ring;     /* [PIN_RING] */
    size_t head, n;             /* Protected by 'mutex'. */
    int efd;                    /* Wakes the main thread. */
    atomic_bool want_action, want_miss;
    atomic_uint_least64_t n_dropped;    /* Ring full. */
};

static struct pin_queue q = {
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .efd = -1,
};

/* The upcall callback (a pmd thread).  See the theory of operation. */
static void
pin_upcall(void *aux, const struct fdp_upcall *up)
{
    (void) aux;
    if (!atomic_load_explicit(up->reason == FDP_UPCALL_MISS
                              ? &q.want_miss : &q.want_action,
                              memory_order_relaxed)) {
        return;
    }
    pthread_mutex_lock(&q.mutex);
    if (q.n == PIN_RING) {
        pthread_mutex_unlock(&q.mutex);
        atomic_fetch_add_explicit(&q.n_dropped, 1, memory_order_relaxed);
        return;
    }
    struct pin_entry *e = &q.ring[(q.head + q.n) % PIN_RING];
    e->kind = (uint8_t) up->reason;
    e->ofp_reason = up->ofp_reason;
    e->controller_id = up->controller_id;
    e->in_port = up->in_port;
    e->total_len = (uint32_t) up->size;
    e->len = (uint16_t) (up->size < PIN_MAX_DATA ? up->size : PIN_MAX_DATA);
    memcpy(e->data, up->data, e->len);
    bool was_empty = !q.n++;
    pthread_mutex_unlock(&q.mutex);
    if (was_empty) {
        uint64_t one = 1;
        ssize_t n = write(q.efd, &one, sizeof one);
        (void) n;               /* A full counter still wakes the loop. */
    }
}

void
pin_start(struct server *s)
{
    q.ring = calloc(PIN_RING, sizeof *q.ring);
    q.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!q.ring || q.efd < 0) {
        fatal("packet-in queue: %s", q.ring ? strerror(errno)
                                             : "out of memory");
    }
    fdp_dp_set_upcall(s->dp, pin_upcall, NULL);
}

void
pin_stop(struct server *s)
{
    if (q.efd < 0) {
        return;
    }
    fdp_dp_set_upcall(s->dp, NULL, NULL);
    close(q.efd);
    q.efd = -1;
    free(q.ring);
    q.ring = NULL;
}

int
pin_fd(void)
{
    return q.efd;
}

uint64_t
pin_n_dropped(void)
{
    return atomic_load_explicit(&q.n_dropped, memory_order_relaxed);
}

void
pin_set_wanted(bool action, bool miss)
{
    atomic_store_explicit(&q.want_action, action, memory_order_relaxed);
    atomic_store_explicit(&q.want_miss, miss, memory_order_relaxed);
}

bool
pin_conn_wants(const struct ofconn *c, bool miss)
{
    if (c->role == OF_ROLE_SLAVE) {
        return false;
    }
    if (!c->is_controller && !c->miss_send_len) {
        return false;
    }
    return !miss || c->version == FDP_OFP10;
}

/* Encodes the packet-in of 'e' for 'c' into 'b'. */
static void
encode(struct fdp__ofpbuf *b, const struct ofconn *c,
       const struct pin_entry *e)
{
    size_t len = e->len;
    uint8_t reason = e->ofp_reason;

    if (e->kind == FDP_UPCALL_MISS) {
        reason = 0;             /* OFPR_NO_MATCH */
        if (c->miss_send_len != 0xffff && len > c->miss_send_len) {
            len = c->miss_send_len;
        }
    }
    if (c->version < FDP_OFP14 && reason > 2) {
        /* Action set, group and packet-out reasons are 1.4's. */
        reason = 1;
    }
    of_start(b, c->version, 10 /* OFPT_PACKET_IN */, 0);
    fdp__ofpbuf_put_be32(b, 0xffffffff);        /* buffer_id: none */
    fdp__ofpbuf_put_be16(b, (uint16_t) (e->total_len > 0xffff
                                        ? 0xffff : e->total_len));
    if (c->version == FDP_OFP10) {
        fdp__ofpbuf_put_be16(b, (uint16_t) e->in_port);
        fdp__ofpbuf_put_u8(b, reason);
        fdp__ofpbuf_put_u8(b, 0);
    } else {
        fdp__ofpbuf_put_u8(b, reason);
        fdp__ofpbuf_put_u8(b, 0);               /* table_id */
        fdp__ofpbuf_put_be64(b, UINT64_MAX);    /* cookie */
        /* struct ofp11_match of type OXM: in_port only, padded to 8. */
        fdp__ofpbuf_put_be16(b, 1);
        fdp__ofpbuf_put_be16(b, 4 + 8);
        fdp__ofpbuf_put_be32(b, 0x80000004);    /* OXM_OF_IN_PORT */
        fdp__ofpbuf_put_be32(b, e->in_port);
        fdp__ofpbuf_put_zeros(b, 4);
        fdp__ofpbuf_put_zeros(b, 2);
    }
    if (b->size + len > OFP_MAX_MSG) {
        len = OFP_MAX_MSG - b->size;
    }
    fdp__ofpbuf_put(b, e->data, len);
    of_finish(b);
}

void
pin_run(struct server *s)
{
    uint64_t n;
    ssize_t r = read(q.efd, &n, sizeof n);

    (void) r;
    for (;;) {
        struct pin_entry e;
        pthread_mutex_lock(&q.mutex);
        if (!q.n) {
            pthread_mutex_unlock(&q.mutex);
            return;
        }
        e = q.ring[q.head];
        q.head = (q.head + 1) % PIN_RING;
        q.n--;
        pthread_mutex_unlock(&q.mutex);

        bool miss = e.kind == FDP_UPCALL_MISS;
        for (struct ofconn *c = of_next_active(s, NULL); c;
             c = of_next_active(s, c)) {
            if (!pin_conn_wants(c, miss)
                || (!miss && e.controller_id
                    && e.controller_id != c->controller_id)) {
                continue;
            }
            struct fdp__ofpbuf b;
            fdp__ofpbuf_init(&b);
            encode(&b, c, &e);
            if (!fdp__ofpbuf_failed(&b)) {
                ofconn_send_async(c, b.data, b.size);
            }
            fdp__ofpbuf_uninit(&b);
        }
    }
}
