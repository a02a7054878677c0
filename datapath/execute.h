/*
 * Action execution on packet bytes (internal to the datapath).
 */
#ifndef FDP_EXECUTE_H
#define FDP_EXECUTE_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/actions.h>
#include <flowdp/datapath.h>
#include <flowdp/key.h>

struct fdp__action;

/* A packet being processed: its bytes, where its layers start (from
 * fdp_packet_extract(), kept current as tags are pushed and popped) and
 * its key as extracted (not updated by set-field actions: the key only
 * says which headers exist, and no action changes that). */
struct fdp__pkt {
    uint8_t *data;
    uint32_t size;
    uint32_t headroom;          /* Writable bytes before 'data'. */
    struct fdp_packet_layout layout;
    struct fdp_key key;
};

/* Where the executor sends packets. */
struct fdp__exec_ops {
    /* Sends 'pkt' to 'port' (an OpenFlow port number, never the input
     * port).  If 'steal' is true the packet's buffer becomes the callee's
     * (it was the last action); otherwise the callee copies what it needs
     * and the executor goes on modifying the packet. */
    void (*output)(void *aux, struct fdp__pkt *pkt, uint32_t port,
                   bool steal);
    /* A copy of 'pkt' goes to the controller (the upcall) as controller
     * record 'a' says (lib/other-actions.h: max_len, reason, id,
     * userdata, pause); the packet goes on. */
    void (*controller)(void *aux, const struct fdp__pkt *pkt,
                       const struct fdp__action *a);
    /* A resolved learn record (lib/learn.h) for the table's writer: the
     * callee copies it (datapath/learner.c).  NULL: learn does nothing. */
    void (*learn)(void *aux, const struct fdp__action *a);
    /* Output to reserved port 'port' (FDP_PORT_NORMAL, _FLOOD, _ALL or
     * _LOCAL) for a packet whose in_port is 'in_port' (datapath/normal.h).
     * With 'steal' the packet's last output may take it: returns whether
     * one did.  NULL: such outputs send nothing. */
    bool (*reserved)(void *aux, struct fdp__pkt *pkt, uint32_t port,
                     uint32_t in_port, bool steal);
};

/* Makes 'pkt''s outer tag carry TCI 'tci': rewrites it, pushes an 802.1Q
 * tag if there is none, or with 'tci' 0 pops it (NORMAL's output VLANs).
 * Returns false if there is no headroom for the tag. */
bool fdp__pkt_set_vlan(struct fdp__pkt *pkt, uint16_t tci);

/* Why execution ended. */
enum fdp__exec_result {
    FDP__EXEC_DONE,             /* All actions ran. */
    FDP__EXEC_STOLEN,           /* The last action took the packet. */
    FDP__EXEC_TTL_EXPIRED,      /* dec_ttl at TTL <= 1: drop. */
    FDP__EXEC_NO_ROOM,          /* No headroom to push another tag. */
    FDP__EXEC_CT,               /* Stopped at a ct action, which the
                                 * caller runs (the tracker works on
                                 * batches): see fdp__execute_from(). */
};

/* Applies 'actions' to 'pkt', received on 'in_port', in order, up to the
 * first ct action (FDP_ACT_CT, in either form: lib/ct-action.h), which
 * it does not run: it returns FDP__EXEC_CT and, if 'ct' is nonnull, sets
 * '*ct' to that record.  The packet is then still the caller's.
 * ct_clear does nothing here: the ct fields live in the pipeline's key,
 * not in the packet. */
enum fdp__exec_result fdp__execute(const struct fdp_actions *actions,
                                   struct fdp__pkt *pkt, uint32_t in_port,
                                   const struct fdp__exec_ops *ops,
                                   void *aux);

/* The same from record 'from' of 'actions' (NULL: the first), so that a
 * caller that ran a ct action goes on with the action after it
 * (fdp__actions_next() of the record fdp__execute() stopped at).  The
 * output that is the list's last action takes the packet (FDP__EXEC_
 * STOLEN) wherever execution started. */
enum fdp__exec_result fdp__execute_from(const struct fdp_actions *actions,
                                        const struct fdp__action *from,
                                        struct fdp__pkt *pkt,
                                        uint32_t in_port,
                                        const struct fdp__exec_ops *ops,
                                        void *aux,
                                        const struct fdp__action **ct);

/* The Internet checksum (RFC 1071) of 'size' bytes at 'data', folded and
 * complemented, starting from the partial sum 'sum'; for tests and for
 * the executor's full recomputations.  Returns the value to store, in
 * network byte order as a number (byte 0 is the high byte). */
uint16_t fdp__csum(uint32_t sum, const void *data, size_t size);

/* The partial (unfolded) one's-complement sum of 'size' bytes. */
uint32_t fdp__csum_add(uint32_t sum, const void *data, size_t size);

#endif /* FDP_EXECUTE_H */
