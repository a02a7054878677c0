/*
 * The ct action as the datapath runs it (internal: lib/ and datapath/).
 *
 * A flow's ct(...) action (FDP_ACT_CT, as the flow parser encodes it)
 * names things that are known only when a packet is classified: a zone
 * taken from a field (zone=NXM_NX_REG0[0..15]), exec() loads and moves
 * whose sources are registers, the table to go on in.  The pipeline
 * resolves them when it composes a packet's actions (lib/outcome.h): the
 * composed list holds, for each ct action that ran, one FDP_ACT_CT record
 * with FDP__ACT_CT_RESOLVED in its header's 'flags' whose payload is a
 * struct fdp__dp_ct, everything in it constant.  The datapath runs that
 * record (datapath/conntrack.h does the tracking and NAT) and, for
 * ct(table=N), classifies the packet again from table N with the
 * pipeline state the record froze and the ct fields the tracker gave
 * (Open vSwitch's recirculation).
 *
 * ct_clear changes only what later lookups of the same pass see (the ct
 * fields of the pipeline's key); it leaves nothing in the composed list.
 */
#ifndef FDP_CT_ACTION_H
#define FDP_CT_ACTION_H 1

#include <assert.h>
#include <stdint.h>

#include <flowdp/key.h>

/* NAT, as nat(...) says it (Open vSwitch's struct ofpact_nat).  Plain
 * "nat" (neither FDP__NAT_SRC nor FDP__NAT_DST) applies to a packet of an
 * existing connection the translation that connection was committed with,
 * and sets up none. */
#define FDP__NAT_SRC 0x01           /* nat(src=...) */
#define FDP__NAT_DST 0x02           /* nat(dst=...) */
#define FDP__NAT_PERSISTENT 0x04    /* persistent */
#define FDP__NAT_HASH 0x08          /* hash (proto_hash) */
#define FDP__NAT_RANDOM 0x10        /* random (proto_random) */
#define FDP__NAT_ADDR 0x20          /* An address range was given. */
#define FDP__NAT_PORT 0x40          /* A port range was given. */
#define FDP__NAT_IPV6 0x80          /* The addresses are IPv6. */

struct fdp__ct_nat {
    uint8_t flags;                  /* FDP__NAT_* */
    uint8_t exec_pos;               /* A flow-form record's only: how many
                                     * exec() actions came before nat,
                                     * which Open vSwitch keeps in one
                                     * list and prints in place
                                     * (format_CT(): a nat that is not
                                     * first goes inside exec()).  Zero in
                                     * a resolved record. */
    uint16_t port_min, port_max;    /* Host order; FDP__NAT_PORT. */
    uint16_t pad2;
    struct fdp_value addr_min, addr_max;    /* FDP__NAT_ADDR.  IPv4: in
                                             * the low 32 bits of 'lo'. */
};

/* In a FDP_ACT_CT record's header 'flags': the record is the composed
 * (datapath) form, a struct fdp__dp_ct. */
#define FDP__ACT_CT_RESOLVED 0x80

/* struct fdp__dp_ct 'flags'. */
#define FDP__DPCT_COMMIT 0x01
#define FDP__DPCT_FORCE 0x02        /* Implies COMMIT. */
#define FDP__DPCT_NAT 0x04          /* 'nat' applies (possibly plain). */
#define FDP__DPCT_RECIRC 0x08       /* ct(table=N): go on in 'table'. */

/* The pipeline state a ct(table=N) freezes: key words FDP_KEY_PACKET_WORDS
 * to FDP_KEY_PACKET_WORDS + FDP__CT_FROZEN_WORDS - 1 (metadata and the
 * registers; conj_id is zero in the continuation). */
#define FDP__CT_FROZEN_WORDS 9
static_assert(FDP_KEY_PACKET_WORDS + FDP__CT_FROZEN_WORDS == 23,
              "the frozen words are metadata and xreg0-xreg7 (key.h)");

struct fdp__dp_ct {
    uint8_t flags;                  /* FDP__DPCT_* */
    uint8_t table;                  /* FDP__DPCT_RECIRC: where to go on. */
    uint16_t zone;
    uint32_t in_port;               /* FDP__DPCT_RECIRC: the in_port the
                                     * continuation sees (a ct inside
                                     * resubmit(PORT) freezes PORT). */
    uint32_t mark, mark_mask;       /* exec(): set on the connection. */
    struct fdp_value label, label_mask;
    struct fdp__ct_nat nat;         /* FDP__DPCT_NAT. */
    uint64_t frozen[FDP__CT_FROZEN_WORDS];  /* FDP__DPCT_RECIRC. */
};
static_assert(sizeof(struct fdp__dp_ct) % 8 == 0,
              "a resolved ct record is whole words");

struct fdp__action;

/* Resolves the flow-form ct action 'ct' (FDP_ACT_CT without
 * FDP__ACT_CT_RESOLVED, lib/actions-internal.h) against 'key', the
 * pipeline's key when the action runs, into '*out': the zone (a constant,
 * or the 16 bits of the key's field the action names), exec()'s writes
 * as mark/mark_mask and label/label_mask (moves read 'key', after the
 * writes before them in the same exec()), the commit, force and nat flags
 * and the nat spec as given, and for ct(table=N) the table, the key's
 * in_port and its frozen words (metadata and registers).  Without
 * FDP__DPCT_RECIRC, 'table', 'in_port' and 'frozen' are zero.  Returns
 * 0, or EINVAL if 'ct' is not a well-formed flow-form ct record ('*out'
 * then says nothing).  Pure: any thread. */
int fdp__ct_resolve(const struct fdp__action *ct, const struct fdp_key *key,
                    struct fdp__dp_ct *out);

/* The words of a resolved ct record: its header and a struct
 * fdp__dp_ct. */
#define FDP__DPCT_RECORD_WORDS (1 + sizeof(struct fdp__dp_ct) / 8)

#endif /* FDP_CT_ACTION_H */
