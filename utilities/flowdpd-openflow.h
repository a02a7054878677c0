/*
 * What flowdpd's OpenFlow channel shares between its two files.
 *
 *   flowdpd-ofconn.c    the transport: listeners (punix, ptcp, pssl),
 *                       connections to controllers (tcp, ssl, unix) with
 *                       back-off and inactivity probes, OpenFlow framing,
 *                       bounded output queues, the hello exchange and
 *                       version negotiation, echo, fail mode, and the
 *                       JSON-RPC methods that set the controllers.
 *   flowdpd-openflow.c  what a connection's messages do once the hello
 *                       exchange is over: the dispatch of each request
 *                       to the daemon and the replies.
 *
 * Thread-safety: main thread only, as the rest of flowdpd (flowdpd.h).
 */
#ifndef FDP_FLOWDPD_OPENFLOW_H
#define FDP_FLOWDPD_OPENFLOW_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/ofp-common.h"

struct server;

/* The OpenFlow header's fields. */
#define OFP_HEADER_LEN 8
/* The largest message read or written.  The header's length is 16 bits,
 * so a message cannot say more than 65535 bytes; the limit is that, and
 * the input buffer holds one such message beside a partial next one. */
#define OFP_MAX_MSG 65535

/* Message types every version numbers alike. */
enum {
    OFPT_HELLO = 0,
    OFPT_ERROR = 1,
    OFPT_ECHO_REQUEST = 2,
    OFPT_ECHO_REPLY = 3,
    OFPT_VENDOR = 4,            /* OpenFlow 1.1+: EXPERIMENTER. */
    OFPT_FEATURES_REQUEST = 5,
    OFPT_FEATURES_REPLY = 6,
    OFPT_GET_CONFIG_REQUEST = 7,
    OFPT_GET_CONFIG_REPLY = 8,
    OFPT_SET_CONFIG = 9,
};

/* Nicira's vendor (experimenter) id. */
#define NX_VENDOR_ID 0x00002320

/* A controller connection's role (OpenFlow 1.2+ values). */
enum of_role {
    OF_ROLE_EQUAL = 1,
    OF_ROLE_MASTER = 2,
    OF_ROLE_SLAVE = 3,
};

/* One OpenFlow connection (flowdpd-ofconn.c owns it; the dispatch reads
 * and sets the per-connection settings). */
struct ofconn {
    /* Settings the peer's messages change (flowdpd-openflow.c). */
    uint8_t version;            /* Negotiated: an enum fdp_ofp_version. */
    enum of_role role;
    uint16_t controller_id;     /* NXT_SET_CONTROLLER_ID. */
    uint16_t config_flags;      /* SET_CONFIG's flags. */
    uint16_t miss_send_len;     /* SET_CONFIG's miss_send_len. */
    uint8_t packet_in_format;   /* NXT_SET_PACKET_IN_FORMAT: 0 standard,
                                 * 1 NXT_PACKET_IN, 2 NXT_PACKET_IN2. */
    bool nxm;                   /* NXT_SET_FLOW_FORMAT chose NXM: a 1.0
                                 * connection's flow removed messages are
                                 * NXT_FLOW_REMOVED. */
    bool flow_mod_table_id;     /* NXT_FLOW_MOD_TABLE_ID: the high byte of
                                 * a 1.0 or NXT flow mod's command is its
                                 * table. */
    bool is_controller;         /* An active connection (--controller):
                                 * as Open vSwitch, controllers get
                                 * asynchronous messages; service
                                 * connections (ovs-ofctl on .mgmt) only
                                 * after they set a controller id. */
    /* The open bundle (OpenFlow 1.4, ONF's 1.3 extension): its id and
     * flags, and the flow mods its add-messages carried, decoded (NULL: no
     * bundle open; flowdpd-openflow.c).  Committed as one transaction. */
    uint32_t bundle_id;
    uint16_t bundle_flags;
    struct of_bundle *bundle;
    uint64_t n_async_dropped;   /* Packet-ins and the like not queued
                                 * because the peer did not keep up. */
};

/* The transport, for the dispatch. */

/* Queues 'msg' (a whole message whose header's length the caller set)
 * on 'c'.  A connection whose queue cannot grow is closed.  Replies are
 * always queued: a peer that does not read them stops being read itself
 * (see flowdpd-ofconn.c), so requests cannot grow the queue much past the
 * high-water mark. */
void ofconn_send(struct ofconn *c, const void *msg, size_t len);

/* Writes what is queued on 'c' as far as its socket takes it now, without
 * waiting (a long reply's first parts go out while the rest is built). */
void ofconn_flush(struct ofconn *c);

/* As ofconn_send() for an asynchronous message (packet-in, flow removed,
 * port status): dropped and counted instead if the queue is over its
 * limit for those.  Returns true if queued. */
bool ofconn_send_async(struct ofconn *c, const void *msg, size_t len);

/* The connection's name for log lines. */
const char *ofconn_name(const struct ofconn *c);

/* Sends an OpenFlow error 'error' in reply to 'request' ('len' bytes),
 * which carries the first 64 bytes of it, in Open vSwitch's codes for the
 * connection's version (lib/ofp-msgs.c). */
void ofconn_send_error(struct ofconn *c, enum fdp_ofperr error,
                       const uint8_t *request, size_t len);

/* Starts a message of 'version', 'type' and 'xid' in 'b' (empty), with a
 * zero length that of_finish() fills in. */
void of_start(struct fdp__ofpbuf *b, uint8_t version, uint8_t type,
              uint32_t xid);
void of_finish(struct fdp__ofpbuf *b);

/* The dispatch (flowdpd-openflow.c). */

/* Handles one whole message of 'len' bytes (at least a header, its
 * length checked) that 'c' received after the hello exchange.  Replies
 * and errors are queued on 'c'.  Returns false if the connection must be
 * closed (a message in a version other than the negotiated one). */
bool of_dispatch(struct server *, struct ofconn *c, const uint8_t *msg,
                 size_t len);

/* Sets up the per-connection settings of a new connection (defaults as
 * Open vSwitch's: equal role, miss_send_len 128). */
/* Frees what the dispatch keeps for 'c' (a bundle left open is
 * discarded, as OpenFlow says). */
void of_conn_destroy(struct ofconn *c);

void of_conn_init(struct ofconn *c, bool is_controller);

/* Groups, meters, TLV tables and conntrack flushes
 * (flowdpd-ofgroup.c): handles 'msg' (header 'h') if it is one of them
 * and returns true, else returns false. */
struct fdp_ofp_header;
bool of_group_dispatch(struct server *, struct ofconn *c, const uint8_t *msg,
                       size_t len, const struct fdp_ofp_header *h);

/* The next active (negotiated) connection after 'prev' (NULL: the
 * first), or NULL. */
struct ofconn *of_next_active(struct server *, const struct ofconn *prev);

/* Packet-ins (flowdpd-ofpin.c): the datapath's upcall, queued for the
 * main thread; the queue's eventfd, which the poll loop watches, and
 * pin_run(), which sends what it holds; pin_set_wanted() tells the
 * upcall whether anyone takes packet-ins from the controller action and
 * from misses; pin_conn_wants() whether connection 'c' does. */
void pin_start(struct server *);
void pin_stop(struct server *);
int pin_fd(void);
void pin_run(struct server *);
void pin_set_wanted(bool action, bool miss);
bool pin_conn_wants(const struct ofconn *c, bool miss);
uint64_t pin_n_dropped(void);

struct fdp_ofp_flow_removed;
/* Sends flow removed 'fr' to the connections that take asynchronous
 * messages and are not slaves (flowdpd-openflow.c). */
void of_flow_removed(struct server *, const struct fdp_ofp_flow_removed *fr);

/* Packet-outs (flowdpd-ofpin.c): decodes, checks and runs 'msg', or sends
 * 'c' the error. */
void of_packet_out(struct server *, struct ofconn *c, const uint8_t *msg,
                   size_t len);

#endif /* FDP_FLOWDPD_OPENFLOW_H */
