/*
 * The stack, registers as ports, notes, queues, clone and the controller
 * action's arguments: records, the stack and clone's restoring records.
 * See lib/other-actions.h for the theory of operation.
 */
#include <config.h>

#include "lib/other-actions.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/field.h"

/* Reserves a record of 'n_words' words of kind 'type' at the end of 'b'
 * and returns it zeroed but for its header, or NULL if out of memory (the
 * builder's sticky error says so). */
static struct fdp__action *
reserve(struct fdp__actions_builder *b, enum fdp_action_type type,
        size_t n_words)
{
    struct fdp__action a = { .type = (uint8_t) type,
                             .n_words = (uint8_t) n_words };
    uint32_t at = b->n_words;

    /* fdp__actions_add_record() copies whole records: build the header
     * here, then let it copy a zeroed body of the right length. */
    uint64_t body[UINT8_MAX];
    memset(body, 0, n_words * sizeof body[0]);
    memcpy(body, &a, sizeof a);
    fdp__actions_add_record(b, (const struct fdp__action *) body);
    return b->error ? NULL : (struct fdp__action *) &b->words[at];
}

int
fdp__actions_add_subfield(struct fdp__actions_builder *b,
                          enum fdp_action_type type, enum fdp_field f,
                          unsigned int ofs, unsigned int n_bits)
{
    if ((type != FDP_ACT_STACK_PUSH && type != FDP_ACT_STACK_POP
         && type != FDP_ACT_OUTPUT_REG)
        || (unsigned int) f >= FDP_N_FIELDS || !n_bits || n_bits > 64
        || ofs + n_bits > fdp__field(f)->n_bits) {
        return EINVAL;
    }

    struct fdp__action *a = reserve(b, type, 1);
    if (a) {
        a->field = (uint8_t) f;
        a->arg = ofs | n_bits << 8;
    }
    return 0;
}

int
fdp__actions_add_note(struct fdp__actions_builder *b, const uint8_t *data,
                      size_t size)
{
    size_t n = 1 + (size + 7) / 8;

    if (n > UINT8_MAX) {
        return EINVAL;
    }
    struct fdp__action *a = reserve(b, FDP_ACT_NOTE, n);
    if (a) {
        a->arg = (uint32_t) size;
        if (size) {
            memcpy((uint64_t *) a + 1, data, size);
        }
    }
    return 0;
}

int
fdp__actions_add_clone(struct fdp__actions_builder *b, const uint64_t *nested,
                       size_t n_words)
{
    if (1 + n_words > UINT8_MAX) {
        return EINVAL;
    }
    struct fdp__action *a = reserve(b, FDP_ACT_CLONE, 1 + n_words);
    if (a && n_words) {
        memcpy((uint64_t *) a + 1, nested, n_words * sizeof *nested);
    }
    return 0;
}

static const char *const reason_names[FDP__CTL_N_REASONS] = {
    [FDP__CTL_NO_MATCH] = "no_match",
    [FDP__CTL_ACTION] = "action",
    [FDP__CTL_INVALID_TTL] = "invalid_ttl",
    [FDP__CTL_ACTION_SET] = "action_set",
    [FDP__CTL_GROUP] = "group",
    [FDP__CTL_PACKET_OUT] = "packet_out",
};

const char *
fdp__ctl_reason_name(enum fdp__ctl_reason r)
{
    return (unsigned int) r < FDP__CTL_N_REASONS ? reason_names[r] : "?";
}

bool
fdp__ctl_reason_from_name(const char *s, enum fdp__ctl_reason *r)
{
    for (unsigned int i = 0; i < FDP__CTL_N_REASONS; i++) {
        if (!strcasecmp(s, reason_names[i])) {
            *r = (enum fdp__ctl_reason) i;
            return true;
        }
    }
    return false;
}

bool
fdp__controller_is_plain(const struct fdp__controller *c)
{
    /* Open vSwitch's parse_CONTROLLER() makes these an output to the
     * controller port, printed CONTROLLER:max_len. */
    return c->reason == FDP__CTL_ACTION && !c->id && !c->userdata_size
           && !c->pause && !c->meter_id && !c->stamped;
}

int
fdp__actions_add_controller(struct fdp__actions_builder *b,
                            const struct fdp__controller *c)
{
    if ((c->reason >= FDP__CTL_N_REASONS
         && !(c->stamped && c->reason == FDP__CTL_EXPLICIT_MISS))
        || c->userdata_size > UINT16_MAX) {
        return EINVAL;
    }
    if (fdp__controller_is_plain(c)) {
        fdp__actions_add(b, FDP_ACT_CONTROLLER, c->max_len);
        return 0;
    }

    /* The long form: [header][reason, id, meter][size, pause, stamped,
     * table][userdata...], and if stamped [cookie][state map][state...]. */
    size_t ud_words = (c->userdata_size + 7) / 8;
    size_t n_state = c->stamped ? (size_t) __builtin_popcountll(c->state_map)
                                : 0;
    size_t n = 3 + ud_words + (c->stamped ? 2 + n_state : 0);
    if (n > UINT8_MAX) {
        return EINVAL;
    }
    struct fdp__action *a = reserve(b, FDP_ACT_CONTROLLER, n);
    if (a) {
        uint64_t *w = (uint64_t *) a;
        a->arg = c->max_len;
        w[1] = (uint64_t) c->reason | (uint64_t) c->id << 16
               | (uint64_t) c->meter_id << 32;
        w[2] = (uint64_t) c->userdata_size | (uint64_t) c->pause << 16
               | (uint64_t) c->stamped << 17
               | (uint64_t) c->table_id << 24;
        if (c->userdata_size) {
            memcpy(&w[3], c->userdata, c->userdata_size);
        }
        if (c->stamped) {
            w[3 + ud_words] = c->cookie;
            w[4 + ud_words] = c->state_map;
            if (n_state) {
                memcpy(&w[5 + ud_words], c->state, n_state * sizeof *w);
            }
        }
    }
    return 0;
}

struct fdp__controller
fdp__action_controller(const struct fdp__action *a)
{
    struct fdp__controller c = {
        .max_len = (uint16_t) a->arg,
        .reason = FDP__CTL_ACTION,
    };

    if (a->n_words >= 3) {
        const uint64_t *w = (const uint64_t *) a;
        c.reason = (uint8_t) w[1];
        c.id = (uint16_t) (w[1] >> 16);
        c.meter_id = (uint32_t) (w[1] >> 32);
        c.userdata_size = (size_t) (w[2] & 0xffff);
        c.pause = (w[2] >> 16) & 1;
        c.userdata = c.userdata_size ? (const uint8_t *) &w[3] : NULL;
        c.stamped = (w[2] >> 17) & 1;
        c.table_id = (uint8_t) (w[2] >> 24);
        if (c.stamped) {
            size_t at = 3 + (c.userdata_size + 7) / 8;
            c.cookie = w[at];
            c.state_map = w[at + 1];
            c.state = &w[at + 2];
        }
    }
    return c;
}

bool
fdp__clone_is_valid(const struct fdp__action *a)
{
    const uint64_t *end = fdp__action_clone_end(a);

    for (const uint64_t *w = fdp__action_clone_first(a); w < end;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *n = (const struct fdp__action *) w;
        if (!n->n_words || w + n->n_words > end) {
            return false;
        }
        switch (n->type) {
        case FDP_ACT_GOTO_TABLE:
        case FDP_ACT_CT:
        case FDP_ACT_CONJUNCTION:
            return false;
        case FDP_ACT_SET_MASKED:
            if (n->flags & FDP__ACT_WRITE_METADATA) {
                return false;
            }
            break;
        case FDP_ACT_CLONE:
            if (!fdp__clone_is_valid(n)) {
                return false;
            }
            break;
        default:
            break;
        }
    }
    return true;
}

/* ---------------------------------------------------------------------- */
/* The stack.                                                              */

void
fdp__stack_init(struct fdp__stack *s)
{
    memset(s, 0, sizeof *s);
}

void
fdp__stack_destroy(struct fdp__stack *s)
{
    free(s->bytes);
    fdp__stack_init(s);
}

int
fdp__stack_push(struct fdp__stack *s, uint64_t value, unsigned int n_bits)
{
    /* Open vSwitch pushes the value's bytes (the fewest whole bytes that
     * hold 'n_bits', most significant first), then their count. */
    unsigned int n_bytes = (n_bits + 7) / 8;

    if (s->size + n_bytes + 1 > s->alloc) {
        size_t alloc = s->alloc ? 2 * s->alloc : 64;
        while (alloc < s->size + n_bytes + 1) {
            alloc *= 2;
        }
        uint8_t *bytes = realloc(s->bytes, alloc);
        if (!bytes) {
            return ENOMEM;
        }
        s->bytes = bytes;
        s->alloc = alloc;
    }
    for (unsigned int i = 0; i < n_bytes; i++) {
        s->bytes[s->size + i] = (uint8_t) (value >> (8 * (n_bytes - 1 - i)));
    }
    s->bytes[s->size + n_bytes] = (uint8_t) n_bytes;
    s->size += n_bytes + 1;
    return 0;
}

bool
fdp__stack_pop(struct fdp__stack *s, uint64_t *value)
{
    if (!s->size) {
        return false;
    }

    unsigned int n_bytes = s->bytes[s->size - 1];
    uint64_t v = 0;

    s->size -= 1 + n_bytes;
    for (unsigned int i = 0; i < n_bytes; i++) {
        v = v << 8 | s->bytes[s->size + i];
    }
    *value = v;
    return true;
}

/* ---------------------------------------------------------------------- */
/* clone(): putting the packet back.                                       */

/* The header fields an action can rewrite, but for the VLAN tag: what
 * fdp__compose_restore() compares. */
static const enum fdp_field restorable[] = {
    FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_NW_SRC, FDP_F_NW_DST,
    FDP_F_IPV6_SRC, FDP_F_IPV6_DST, FDP_F_IPV6_LABEL, FDP_F_NW_TOS,
    FDP_F_NW_ECN, FDP_F_NW_TTL, FDP_F_TP_SRC, FDP_F_TP_DST,
    FDP_F_ICMP_TYPE, FDP_F_ICMP_CODE, FDP_F_ARP_OP, FDP_F_ARP_SPA,
    FDP_F_ARP_TPA, FDP_F_ARP_SHA, FDP_F_ARP_THA,
};

/* True if a packet whose key is 'k' has the header prerequisite 'pr'
 * names: the fields of the packet's own headers are the ones to put back
 * (ARP's arp_tpa shares the key's bits with nw_dst, and an IPv4 packet
 * has no arp_tpa to write). */
static bool
key_meets(const struct fdp_key *k, enum fdp__prereq pr)
{
    unsigned int dl = (unsigned int) fdp__key_get(k, FDP_F_DL_TYPE);
    unsigned int proto = (unsigned int) fdp__key_get(k, FDP_F_NW_PROTO);
    bool ip4 = dl == FDP_ETH_TYPE_IP, ip6 = dl == FDP_ETH_TYPE_IPV6;
    bool ip = ip4 || ip6;

    switch (pr) {
    case FDP__P_NONE:
    case FDP__P_VLAN:
        return true;
    case FDP__P_IP_ANY:
        return ip;
    case FDP__P_IPV4:
        return ip4;
    case FDP__P_IPV6:
        return ip6;
    case FDP__P_ARP:
        return dl == FDP_ETH_TYPE_ARP || dl == FDP_ETH_TYPE_RARP;
    case FDP__P_L4:
        return ip && (proto == 6 || proto == 17 || proto == 132);
    case FDP__P_TCP:
        return ip && proto == 6;
    case FDP__P_UDP:
        return ip && proto == 17;
    case FDP__P_SCTP:
        return ip && proto == 132;
    case FDP__P_ICMP_ANY:
        return (ip4 && proto == 1) || (ip6 && proto == 58);
    case FDP__P_ICMPV4:
        return ip4 && proto == 1;
    case FDP__P_ICMPV6:
        return ip6 && proto == 58;
    default:
        return false;
    }
}

int
fdp__composed_tag_delta(const uint64_t *first, const uint64_t *end,
                        uint16_t tci)
{
    int delta = 0;

    for (const uint64_t *w = first; w < end;
         w += ((const struct fdp__action *) w)->n_words) {
        const struct fdp__action *a = (const struct fdp__action *) w;
        switch (a->type) {
        case FDP_ACT_PUSH_VLAN:
            delta++;
            tci |= FDP_VLAN_CFI;
            break;
        case FDP_ACT_STRIP_VLAN:
            if (tci & FDP_VLAN_CFI) {
                delta--;
            }
            /* What is under the tag is not known here: the key says
             * none, as the pipeline's tracking does. */
            tci = 0;
            break;
        case FDP_ACT_SET_VLAN_VID:
        case FDP_ACT_SET_VLAN_PCP:
            if (!(tci & FDP_VLAN_CFI)) {
                delta++;
            }
            tci |= FDP_VLAN_CFI;
            break;
        default:
            break;
        }
    }
    return delta;
}

void
fdp__compose_restore(struct fdp__actions_builder *b,
                     const struct fdp_key *was, const struct fdp_key *now,
                     int tags_pushed)
{
    uint16_t tci_was = (uint16_t) fdp__key_get(was, FDP_F_VLAN_TCI);
    uint16_t tci_now = (uint16_t) fdp__key_get(now, FDP_F_VLAN_TCI);

    /* The tag first: the executor finds the L3 header after it. */
    for (int i = 0; i < tags_pushed; i++) {
        fdp__actions_add(b, FDP_ACT_STRIP_VLAN, 0);
        tci_now = 0;
    }
    if (tags_pushed < 0 && tci_was & FDP_VLAN_CFI) {
        fdp__actions_add(b, FDP_ACT_PUSH_VLAN, 0x8100);  /* 802.1Q */
        tci_now = FDP_VLAN_CFI;
    }
    if (tci_was & FDP_VLAN_CFI && tci_was != tci_now) {
        fdp__actions_add(b, FDP_ACT_SET_VLAN_VID, tci_was & FDP_VLAN_VID_MASK);
        fdp__actions_add(b, FDP_ACT_SET_VLAN_PCP, (tci_was >> 13) & 7);
    }
    for (size_t i = 0; i < sizeof restorable / sizeof restorable[0]; i++) {
        enum fdp_field f = restorable[i];
        fdp_u128 v = fdp__key_get(was, f);
        if (v != fdp__key_get(now, f)
            && key_meets(was, fdp__field(f)->prereq)) {
            fdp__actions_add_set_field(b, f, v, 0);
        }
    }
}

int
fdp__actions_add_check_pkt_larger(struct fdp__actions_builder *b,
                                  uint16_t pkt_len, enum fdp_field f,
                                  unsigned int ofs)
{
    if ((unsigned int) f >= FDP_N_FIELDS || ofs >= fdp__field(f)->n_bits
        || ofs > 0xff) {
        return EINVAL;
    }

    struct fdp__action *a = reserve(b, FDP_ACT_CHECK_PKT_LARGER, 1);
    if (a) {
        a->field = (uint8_t) f;
        a->arg = pkt_len | (uint32_t) ofs << 16;
    }
    return 0;
}
