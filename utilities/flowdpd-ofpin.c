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
 * What a packet-in carries (lib/ofp-packet.c encodes it in the form the
 * connection asked for with NXT_SET_PACKET_IN_FORMAT: the standard
 * packet-in of its version, NXT_PACKET_IN or NXT_PACKET_IN2): the reason
 * as Open vSwitch gives it for the version (a controller action in a
 * table-miss flow is no_match from OpenFlow 1.3 on; group, action_set and
 * packet_out are 1.4's and "action" before), the table and cookie of the
 * flow whose action sent it (a miss: table 0, cookie all-ones), the
 * in_port, the controller action's userdata (NXT_PACKET_IN2 only), the
 * packet (at most max_len or miss_send_len bytes of it), buffer_id none.
 * The pipeline metadata of the packet at the action (registers,
 * metadata, tunnel and ct fields) is not sent: the upcall gives the key
 * the packet arrived with, not the pipeline's state at the action.
 * Continuations (controller(pause), NXT_RESUME) are not kept: a paused
 * packet-in is sent like any other.
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
#include "lib/actions-internal.h"
#include "lib/field.h"
#include "lib/ofp-msgs.h"

/* Packets queued at most (a burst of a tenth of a second at 10k
 * packet-ins a second), and the bytes of each kept: an Ethernet frame of
 * a standard MTU and its VLAN tags. */
#define PIN_RING 1024
#define PIN_MAX_DATA 1536
#define PIN_MAX_USERDATA 1024   /* A controller action's userdata: more
                                 * than that is not queued (counted as a
                                 * drop), never cut. */

struct pin_entry {
    uint8_t kind;               /* FDP_UPCALL_MISS or _ACTION. */
    uint8_t ofp_reason;         /* flowdp/datapath.h's (6: explicit miss). */
    uint8_t table_id;
    uint16_t controller_id;
    uint32_t in_port;
    uint64_t cookie;
    uint32_t total_len;         /* The packet's size as it came. */
    uint16_t len;               /* Bytes of 'data' kept. */
    uint16_t userdata_len;
    struct fdp_key key;         /* The upcall's: the packet-in's metadata. */
    uint8_t data[PIN_MAX_DATA];
    uint8_t userdata[PIN_MAX_USERDATA];
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
    if (q.n == PIN_RING || up->userdata_size > PIN_MAX_USERDATA) {
        pthread_mutex_unlock(&q.mutex);
        atomic_fetch_add_explicit(&q.n_dropped, 1, memory_order_relaxed);
        return;
    }
    struct pin_entry *e = &q.ring[(q.head + q.n) % PIN_RING];
    e->kind = (uint8_t) up->reason;
    e->ofp_reason = up->ofp_reason;
    e->table_id = up->table_id;
    e->cookie = up->cookie;
    e->userdata_len = (uint16_t) up->userdata_size;
    if (up->userdata_size) {
        memcpy(e->userdata, up->userdata, up->userdata_size);
    }
    e->controller_id = up->controller_id;
    e->key = *up->key;
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

/* The reason 'e' gives a connection of 'version' (Open vSwitch's
 * ofputil_packet_in_reason for the wire). */
static uint8_t
wire_reason(const struct pin_entry *e, uint8_t version)
{
    if (e->kind == FDP_UPCALL_MISS) {
        return FDP_OFPR_NO_MATCH;
    }
    switch (e->ofp_reason) {
    case FDP_OFPR_ACTION_SET:
    case FDP_OFPR_GROUP:
    case FDP_OFPR_PACKET_OUT:
        return version < FDP_OFP14 ? FDP_OFPR_ACTION : e->ofp_reason;
    case 6:                     /* An explicit miss. */
        return version < FDP_OFP13 ? FDP_OFPR_ACTION : FDP_OFPR_NO_MATCH;
    default:
        return e->ofp_reason;
    }
}

/* The packet-in's metadata: the in_port and, as Open vSwitch's
 * flow_get_metadata() has them, the pipeline fields of 'e''s key that are
 * not zero (tunnel, metadata, registers, pkt_mark, connection tracking;
 * the ct tuple only with a tracked state).  NULL if out of memory. */
static struct fdp_match *
metadata_match(const struct pin_entry *e)
{
    static const enum fdp_field fields[] = {
        FDP_F_TUN_ID, FDP_F_TUN_SRC, FDP_F_TUN_DST, FDP_F_TUN_IPV6_SRC,
        FDP_F_TUN_IPV6_DST, FDP_F_TUN_FLAGS, FDP_F_TUN_TOS, FDP_F_TUN_TTL,
        FDP_F_TUN_GBP_ID, FDP_F_TUN_GBP_FLAGS, FDP_F_METADATA,
        FDP_F_REG0, FDP_F_REG1, FDP_F_REG2, FDP_F_REG3, FDP_F_REG4,
        FDP_F_REG5, FDP_F_REG6, FDP_F_REG7, FDP_F_REG8, FDP_F_REG9,
        FDP_F_REG10, FDP_F_REG11, FDP_F_REG12, FDP_F_REG13, FDP_F_REG14,
        FDP_F_REG15, FDP_F_PKT_MARK, FDP_F_CT_STATE, FDP_F_DL_TYPE,
        FDP_F_CT_NW_SRC, FDP_F_CT_NW_DST, FDP_F_CT_IPV6_SRC,
        FDP_F_CT_IPV6_DST, FDP_F_CT_NW_PROTO, FDP_F_CT_TP_SRC,
        FDP_F_CT_TP_DST, FDP_F_CT_ZONE, FDP_F_CT_MARK, FDP_F_CT_LABEL,
    };
    struct fdp_match *md = fdp_match_create();
    int error = !md || fdp_match_set_masked(
        md, FDP_F_IN_PORT, (struct fdp_value) { .lo = e->in_port },
        (struct fdp_value) { .lo = 0xffff });
    /* With a ct_state, the dl_type that reads the ct fields, and with a
     * valid tracked state and a protocol, the whole original tuple of the
     * packet's family (zeros too). */
    unsigned int st = (unsigned int) fdp__key_get(&e->key, FDP_F_CT_STATE);
    unsigned int dl_type = (unsigned int) fdp__key_get(&e->key,
                                                       FDP_F_DL_TYPE);
    bool tuple = st & FDP_CT_TRK && !(st & FDP_CT_INV)
                 && fdp__key_get(&e->key, FDP_F_CT_NW_PROTO);
    for (size_t i = 0; !error && i < sizeof fields / sizeof fields[0]; i++) {
        enum fdp_field f = fields[i];
        fdp_u128 v = fdp__key_get(&e->key, f);
        bool want;
        switch (f) {
        case FDP_F_DL_TYPE:
            want = st != 0;
            break;
        case FDP_F_CT_NW_SRC:
        case FDP_F_CT_NW_DST:
            want = tuple && dl_type == 0x0800;
            break;
        case FDP_F_CT_IPV6_SRC:
        case FDP_F_CT_IPV6_DST:
            want = tuple && dl_type == 0x86dd;
            break;
        case FDP_F_CT_NW_PROTO:
        case FDP_F_CT_TP_SRC:
        case FDP_F_CT_TP_DST:
            want = tuple && (dl_type == 0x0800 || dl_type == 0x86dd);
            break;
        default:
            want = v != 0;
            break;
        }
        if (!want) {
            continue;
        }
        unsigned int n_bits = fdp__field(f)->n_bits;
        fdp_u128 ones = fdp__ones(n_bits);
        error = fdp_match_set_masked(
            md, f, (struct fdp_value) { (uint64_t) (v >> 64), (uint64_t) v },
            (struct fdp_value) { (uint64_t) (ones >> 64), (uint64_t) ones });
    }
    if (error) {
        fdp_match_destroy(md);
        return NULL;
    }
    return md;
}

/* Encodes the packet-in of 'e' for 'c' into 'b'. */
static void
encode(struct server *s, struct fdp__ofpbuf *b, const struct ofconn *c,
       const struct pin_entry *e)
{
    size_t len = e->len;

    if (e->kind == FDP_UPCALL_MISS && c->miss_send_len != 0xffff
        && len > c->miss_send_len) {
        len = c->miss_send_len;
    }
    struct fdp_match *md = metadata_match(e);
    if (!md) {
        b->failed = true;
        return;
    }
    struct fdp_ofp_packet_in pin = {
        .packet = e->data,
        .packet_len = len,
        .total_len = e->total_len,
        .buffer_id = FDP_OFP_NO_BUFFER,
        .in_port = fdp_ofp_port_from_ofp10((uint16_t) e->in_port),
        .reason = wire_reason(e, c->version),
        .table_id = e->table_id,
        .cookie = e->cookie,
        .metadata = md,
        .userdata = e->userdata_len ? e->userdata : NULL,
        .userdata_len = e->userdata_len,
    };
    enum fdp_ofpraw raw = c->packet_in_format == 2 ? FDP_OFPRAW_NXT_PACKET_IN2
                          : c->packet_in_format == 1 ? FDP_OFPRAW_NXT_PACKET_IN
                          : fdp_ofpraw_for(FDP_OFPTYPE_PACKET_IN, c->version);
    if (fdp_ofp_encode_packet_in(b, &pin, raw, c->version,
                                 fdp_pipeline_tlv_map(s->pipeline))) {
        b->failed = true;
    }
    fdp_match_destroy(md);
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
            encode(s, &b, c, &e);
            if (!fdp__ofpbuf_failed(&b)) {
                ofconn_send_async(c, b.data, b.size);
            }
            fdp__ofpbuf_uninit(&b);
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Packet-outs.                                                            */

/* A packet-out (OFPT_PACKET_OUT) is checked as Open vSwitch's
 * ofproto_packet_out_init() checks it and handed to the datapath
 * (fdp_dp_packet_out()), which runs it on the next pmd poll: its actions
 * compose through the pipeline (output:TABLE, decoded as resubmit(,0),
 * runs the tables), and the flows they reach count it.  flowdpd keeps no
 * buffers (its features say 0), so a buffer id is OFPBRC_BUFFER_UNKNOWN.
 * The actions must suit the packet (Open vSwitch checks them against the
 * packet's own fields: a mod_nw_src for an ARP packet is
 * OFPBAC_MATCH_INCONSISTENT).  OpenFlow 1.5's match gives the pipeline
 * state the packet starts with, as Open vSwitch takes it (the values of
 * the fields it names, masks aside; the packet's own fields come from
 * the packet whatever the match says): metadata, registers, tunnel and
 * ct fields, pkt_mark (what ovn-controller's pinctrl sets).  A
 * packet-out the datapath's queue cannot take (256 waiting) is dropped
 * and counted, as a network drops what it cannot carry. */
void
of_packet_out(struct server *s, struct ofconn *c, const uint8_t *msg,
              size_t len)
{
    struct fdp_ofp_packet_out po;
    int error = fdp_ofp_decode_packet_out(msg, len,
                                          fdp_pipeline_tlv_map(s->pipeline),
                                          &po);
    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    uint16_t in_port = fdp_ofp_port_to_ofp10(po.in_port);
    struct fdp_key state;
    memset(&state, 0, sizeof state);
    if (po.buffer_id != FDP_OFP_NO_BUFFER) {
        error = FDP_OFPBRC_BUFFER_UNKNOWN;
    } else if (po.packet_len < 14 || po.packet_len > UINT16_MAX) {
        error = FDP_OFPBRC_BAD_LEN;
    } else if (po.match) {
        for (int f = 0; f < FDP_N_FIELDS; f++) {
            struct fdp_value v;
            if (f == FDP_F_CONJ_ID
                || (fdp__field_is_packet((enum fdp_field) f)
                    && f != FDP_F_PKT_MARK)
                || !fdp_match_get(po.match, (enum fdp_field) f, &v)) {
                continue;
            }
            fdp__key_set_tunnel(&state, (enum fdp_field) f,
                                (fdp_u128) v.hi << 64 | v.lo);
        }
    }
    if (!error) {
        /* The actions against the packet's own fields. */
        struct fdp_key key;
        struct fdp_packet_layout layout;
        fdp_packet_extract(po.packet, po.packet_len, in_port, &key, &layout);
        struct fdp_match *m = fdp_match_create();
        static const struct {
            enum fdp_field field;
            uint64_t ones;
        } fields[] = {
            { FDP_F_DL_TYPE, 0xffff }, { FDP_F_NW_PROTO, 0xff },
            { FDP_F_TP_SRC, 0xffff }, { FDP_F_TP_DST, 0xffff },
        };
        for (size_t i = 0; m && i < sizeof fields / sizeof fields[0]; i++) {
            struct fdp_value ones = { .lo = fields[i].ones };
            if (fdp_match_set_masked(m, fields[i].field,
                                     fdp_key_get(&key, fields[i].field),
                                     ones)) {
                fdp_match_destroy(m);
                m = NULL;
            }
        }
        if (!m) {
            error = FDP_OFPERR_NOMEM;
        } else if (fdp__actions_validate(po.actions, m, NULL)) {
            error = FDP_OFPBAC_MATCH_INCONSISTENT;
        }
        fdp_match_destroy(m);
    }
    if (!error) {
        int e = fdp_dp_packet_out(s->dp, po.packet, po.packet_len, in_port,
                                  po.match ? &state : NULL, po.actions);
        if (e == EMSGSIZE) {
            error = FDP_OFPBRC_BAD_LEN;
        } else if (e == ENOMEM) {
            error = FDP_OFPERR_NOMEM;
        } else if (e && e != ENOBUFS) {
            error = FDP_OFPBRC_EPERM;
        }
    }
    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
    }
    fdp_ofp_packet_out_destroy(&po);
}
