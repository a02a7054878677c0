/*
 * OpenFlow groups (flowdp/group.h): their text, their selection and their
 * place in the pipeline.
 *
 * Theory of operation
 * ===================
 *
 * Where groups live.  Buckets of real programs hold pipeline actions:
 * OVN's load balancers write
 *   bucket=actions=ct(commit,table=15,zone=NXM_NX_REG11[0..15],
 *                     nat(dst=10.0.0.4:80))
 * and Antrea's
 *   bucket=actions=load:0x1->NXM_NX_REG3[],resubmit(,42)
 * so a bucket cannot run on the packet's bytes after classification: its
 * registers and resubmits are the pipeline's.  Groups therefore belong to
 * the pipeline, as ofproto's groups belong to the bridge, and are composed
 * into a packet's actions when the pipeline classifies it, as Open
 * vSwitch's xlate_group_action() does (lib/pipeline.c, run_group()):
 *   all       each bucket runs on a copy of the key: after a bucket, the
 *             key (registers included) is what it was before it, and the
 *             packet is rewritten back where the bucket changed its
 *             headers, so that the next bucket sees the packet the group
 *             got (Open vSwitch commits its set actions against the flow
 *             it restores, to the same effect);
 *   indirect  its bucket, the same way;
 *   ff        the first live bucket;
 *   select    the bucket a hash of the key picks (below).
 * Every choice depends on the key and on the pipeline's version only, so
 * the composed actions are what the datapath caches per exact key.  A
 * group change is a pipeline change: it happens in the pipeline's
 * transactions (the writer's mutex), and its commit publishes a new
 * version, whose snapshot (lib/pipeline-view.h) points to the groups of
 * that version (struct fdp__group_set), so that every cached outcome
 * composed from the old groups is stale at once.  Port liveness, which
 * fast-failover groups read, is part of the same snapshot, and a change
 * of it publishes too.
 *
 * Buckets are action sets.  OpenFlow makes a bucket an action set, and
 * Open vSwitch runs it as ofpacts_execute_action_set() orders it: the
 * last strip_vlan, push_vlan and dec_ttl (in that order), then every
 * set-field, load and move in the order given, then one final action:
 * the last of the highest class present among ct, ct_clear, resubmit,
 * output (controller too: OpenFlow 1.1+ carries it as an output) and
 * group, lowest to highest.  A bucket with no final action does nothing;
 * actions an action set cannot hold (goto_table, write_metadata,
 * conjunction) are left out.  The bucket's
 * runnable list, 'set', is made once, when the group is parsed; its text
 * keeps the actions as given.
 *
 * Selection.  As Open vSwitch's dp_hash groups (group_setup_dp_hash_
 * table()), a select group has a table of slots, a power of two of them,
 * at least sixteen, at least eight per bucket with a weight and at least
 * total weight / smallest weight, up to FDP__GROUP_MAX_SLOTS: each slot
 * names a bucket, and the slots are apportioned to the buckets by weight
 * with Webster's method (the highest weight / (2 * slots so far + 1)
 * takes the next slot).  With eight or more slots per bucket, equal
 * buckets get slot counts that differ by at most one, so their shares
 * differ by at most 1/8 (12.5 %).  A packet takes slot hash & mask,
 * where the hash is:
 *   default (no selection_method): a symmetric hash of the 5-tuple (Open
 *     vSwitch's OVS_HASH_ALG_SYM_L4: both directions of a connection
 *     choose the same bucket);
 *   dp_hash: a hash of the 5-tuple (OVS_HASH_ALG_L4), with the low 32
 *     bits of selection_method_param as its basis;
 *   hash: a hash of the fields(...) given, each under its mask, a field
 *     whose prerequisites the packet lacks left out (as
 *     pick_hash_fields_select_group() does), with the same basis.
 * A slot whose bucket is not live (its watch_port down) passes the packet
 * to the next slot, as Open vSwitch walks its hash map, so the other
 * buckets keep their proportions.  Choosing costs the same whatever the
 * number of buckets: one hash and one load.
 *
 * Worked example.  group_id=1,type=select,bucket=weight:2,actions=output:1,
 * bucket=weight:1,actions=output:2: total weight 3, smallest 1, so
 * max(16, 8 * 2, 3) = 16 slots; Webster gives bucket 0 slots 0, 2, 3, 5,
 * ... (11 of them) and bucket 1 five: 11/16 = 69 % against the ideal
 * 67 %.  A TCP packet whose symmetric hash is 0x8d3a21f7 takes slot 7.
 *
 * Counters.  Each group and each bucket has a line of sharded counters,
 * the kind flows have (struct fdp__rule_counters).  Composing a group
 * appends the group's and the chosen buckets' counters to the result
 * (fdp__pipeline_result_group_counters()), the datapath adds them to the
 * outcome it caches beside its flows' counters, and every packet of that
 * outcome, cache hits included, is counted on its pmd's own shard; a dump
 * sums the shards.
 *
 * Flows and groups.  A flow may name only groups that exist
 * (fdp__group_table_check_actions(), as Open vSwitch's
 * OFPBAC_BAD_OUT_GROUP); deleting a group deletes the flows that name it,
 * in the same transaction (fdp_pipeline_group_del()).  A bucket may name
 * groups that do not exist (as Open vSwitch accepts; composing it ends
 * the bucket there), but never its own group through any chain of
 * group:N and watch_group (ELOOP), so that composition always ends; the
 * chain's depth is bounded as well (FDP__GROUP_MAX_CHAIN).
 *
 * Thread-safety: the writer's functions run under the pipeline's mutex; a
 * published struct fdp__group_set and its groups are immutable, read
 * under RCU, and freed a grace period after the commit that replaced them
 * (fdp__group_table_reclaim()).
 */
#include <config.h>

#include <flowdp/group.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/actions-internal.h"
#include "lib/ds.h"
#include "lib/field.h"
#include "lib/flow-text.h"
#include "lib/group.h"
#include "lib/pipeline-view.h"
#include "lib/rule.h"
#include "lib/util.h"
#include <flowdp/flow.h>
#include <flowdp/hash.h>
#include <flowdp/match.h>
#include <flowdp/pipeline.h>
#include <flowdp/table.h>

/* ---------------------------------------------------------------------- */
/* Hash fields.                                                            */

/* The fields a hash selection method takes, by the names Open vSwitch
 * prints them (the first spelling of each field), with the aliases
 * ovs-ofctl accepts for them after. */
static const struct {
    const char *name;
    enum fdp_field field;
    enum fdp__prereq prereq;
    bool canonical;
} hash_fields[] = {
    { "in_port", FDP_F_IN_PORT, FDP__P_NONE, true },
    { "eth_src", FDP_F_DL_SRC, FDP__P_NONE, true },
    { "eth_dst", FDP_F_DL_DST, FDP__P_NONE, true },
    { "eth_type", FDP_F_DL_TYPE, FDP__P_NONE, true },
    { "vlan_tci", FDP_F_VLAN_TCI, FDP__P_NONE, true },
    { "ip_src", FDP_F_NW_SRC, FDP__P_IPV4, true },
    { "ip_dst", FDP_F_NW_DST, FDP__P_IPV4, true },
    { "ipv6_src", FDP_F_IPV6_SRC, FDP__P_IPV6, true },
    { "ipv6_dst", FDP_F_IPV6_DST, FDP__P_IPV6, true },
    { "ipv6_label", FDP_F_IPV6_LABEL, FDP__P_IPV6, true },
    { "nw_proto", FDP_F_NW_PROTO, FDP__P_IP_ANY, true },
    { "tcp_src", FDP_F_TP_SRC, FDP__P_TCP, true },
    { "tcp_dst", FDP_F_TP_DST, FDP__P_TCP, true },
    { "udp_src", FDP_F_TP_SRC, FDP__P_UDP, true },
    { "udp_dst", FDP_F_TP_DST, FDP__P_UDP, true },
    { "sctp_src", FDP_F_TP_SRC, FDP__P_SCTP, true },
    { "sctp_dst", FDP_F_TP_DST, FDP__P_SCTP, true },
    { "arp_spa", FDP_F_ARP_SPA, FDP__P_ARP, true },
    { "arp_tpa", FDP_F_ARP_TPA, FDP__P_ARP, true },
    { "pkt_mark", FDP_F_PKT_MARK, FDP__P_NONE, true },
    /* Aliases. */
    { "dl_src", FDP_F_DL_SRC, FDP__P_NONE, false },
    { "dl_dst", FDP_F_DL_DST, FDP__P_NONE, false },
    { "dl_type", FDP_F_DL_TYPE, FDP__P_NONE, false },
    { "nw_src", FDP_F_NW_SRC, FDP__P_IPV4, false },
    { "nw_dst", FDP_F_NW_DST, FDP__P_IPV4, false },
    { "ip_proto", FDP_F_NW_PROTO, FDP__P_IP_ANY, false },
    { "tp_src", FDP_F_TP_SRC, FDP__P_TCP, false },
    { "tp_dst", FDP_F_TP_DST, FDP__P_TCP, false },
};

/* The canonical entry of hash field entry 'i' (an alias's field under
 * the name Open vSwitch prints). */
static size_t
hash_field_canonical(size_t i)
{
    for (size_t j = 0; j < FDP_ARRAY_SIZE(hash_fields); j++) {
        if (hash_fields[j].canonical && hash_fields[j].field
            == hash_fields[i].field && hash_fields[j].prereq
            == hash_fields[i].prereq) {
            return j;
        }
    }
    return i;
}

const char *
fdp__group_hash_field_name(uint8_t name)
{
    return name < FDP_ARRAY_SIZE(hash_fields) ? hash_fields[name].name : "";
}

/* True if the packet whose key is 'key' meets 'pr'. */
static bool
key_meets(const struct fdp_key *key, enum fdp__prereq pr)
{
    uint64_t type = (uint64_t) fdp__key_get(key, FDP_F_DL_TYPE);
    uint64_t proto = (uint64_t) fdp__key_get(key, FDP_F_NW_PROTO);
    bool ip = type == FDP_ETH_TYPE_IP || type == FDP_ETH_TYPE_IPV6;

    switch (pr) {
    case FDP__P_NONE:
        return true;
    case FDP__P_IP_ANY:
        return ip;
    case FDP__P_IPV4:
        return type == FDP_ETH_TYPE_IP;
    case FDP__P_IPV6:
        return type == FDP_ETH_TYPE_IPV6;
    case FDP__P_ARP:
        return type == FDP_ETH_TYPE_ARP || type == FDP_ETH_TYPE_RARP;
    case FDP__P_TCP:
        return ip && proto == FDP_IPPROTO_TCP;
    case FDP__P_UDP:
        return ip && proto == FDP_IPPROTO_UDP;
    case FDP__P_SCTP:
        return ip && proto == FDP_IPPROTO_SCTP;
    default:
        return false;
    }
}

/* ---------------------------------------------------------------------- */
/* Parsing.                                                                */

struct gparser {
    const char *text;           /* The original, for columns. */
    char *buf;                  /* Modifiable copy, same offsets. */
    char **errorp;
};

static int __attribute__((format(printf, 3, 4)))
gerror(struct gparser *gp, const char *at, const char *format, ...)
{
    if (gp->errorp && !*gp->errorp) {
        char msg[512];
        va_list args;
        va_start(args, format);
        vsnprintf(msg, sizeof msg, format, args);
        va_end(args);
        long col = at ? (long) (at - gp->buf) + 1 : 0;
        char *s = NULL;
        if (col > 0 && asprintf(&s, "column %ld: %s", col, msg) < 0) {
            s = NULL;
        } else if (col <= 0) {
            s = strdup(msg);
        }
        *gp->errorp = s;
    }
    return EINVAL;
}

/* Open vSwitch's ofputil_parse_key_value(): skips delimiters, then takes
 * "key", "key=value", "key:value" or "key(value)" (a value running to
 * the matching parenthesis, or to a comma or white space outside
 * parentheses).  Returns false at the end of the string. */
static size_t
value_len(const char *s, const char *delims)
{
    int depth = 0;
    size_t n = 0;

    for (; s[n]; n++) {
        if (!depth && strchr(delims, s[n])) {
            break;
        }
        if (s[n] == '(') {
            depth++;
        } else if (s[n] == ')' && depth > 0) {
            depth--;
        }
    }
    return n;
}

static bool
next_key_value(char **sp, char **keyp, char **valuep)
{
    char *s = *sp + strspn(*sp, ", \t\r\n");

    if (!*s) {
        *sp = s;
        return false;
    }
    char *key = s;
    size_t klen = strcspn(key, ":=(, \t\r\n");
    char delim = key[klen];
    key[klen] = '\0';
    s += klen + (delim != '\0');
    if (delim != ':' && delim != '=' && delim != '(') {
        *keyp = key;
        *valuep = key + klen;
        *sp = s;
        return true;
    }
    char *value = s;
    size_t vlen = value_len(value, delim == '(' ? ")" : ", \t\r\n");
    char vdelim = value[vlen];
    value[vlen] = '\0';
    s += vlen + (vdelim != '\0');
    *keyp = key;
    *valuep = value;
    *sp = s;
    return true;
}

static bool
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;

    if (!*s || *s == '-' || isspace((unsigned char) *s)) {
        return false;
    }
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max) {
        return false;
    }
    *out = v;
    return true;
}

static int
parse_u32_arg(struct gparser *gp, const char *key, const char *value,
              uint64_t max, uint32_t *out)
{
    uint64_t v;

    if (!parse_u64(value, max, &v)) {
        return gerror(gp, key, "%s=%s: not a number in 0..%" PRIu64, key,
                      value, max);
    }
    *out = (uint32_t) v;
    return 0;
}

static struct fdp__rule_counters *
counters_create(void)
{
    struct fdp__rule_counters *c = aligned_alloc(64, sizeof *c);

    if (c) {
        memset(c, 0, sizeof *c);
    }
    return c;
}

/* Parses one field list of fields(...) or fields=. */
static int
parse_hash_fields(struct gparser *gp, struct fdp_group *g, char *s)
{
    char *key, *value;

    while (next_key_value(&s, &key, &value)) {
        size_t i;
        for (i = 0; i < FDP_ARRAY_SIZE(hash_fields); i++) {
            if (!strcmp(key, hash_fields[i].name)) {
                break;
            }
        }
        if (i == FDP_ARRAY_SIZE(hash_fields)) {
            return gerror(gp, key, "fields: unknown field %s (a selection "
                          "hash takes in_port, eth_src, eth_dst, eth_type, "
                          "vlan_tci, ip_src, ip_dst, ipv6_src, ipv6_dst, "
                          "ipv6_label, nw_proto, tcp_src, tcp_dst, udp_src, "
                          "udp_dst, sctp_src, sctp_dst, arp_spa, arp_tpa, "
                          "pkt_mark)", key);
        }
        i = hash_field_canonical(i);
        for (uint32_t k = 0; k < g->n_fields; k++) {
            if (g->fields[k].name == i) {
                return gerror(gp, key, "%s: duplicate field", key);
            }
        }
        if (g->n_fields == FDP__GROUP_MAX_FIELDS) {
            return gerror(gp, key, "fields: more than %d fields",
                          FDP__GROUP_MAX_FIELDS);
        }
        struct fdp__hash_field *hf = &g->fields[g->n_fields++];
        hf->name = (uint8_t) i;
        hf->masked = false;
        if (*value) {
            /* The value is a mask: parse it in the field's own syntax
             * through the packet parser, which knows every syntax. */
            char text[160];
            struct fdp_key k;
            char *msg = NULL;
            const char *fname = fdp__field(hash_fields[i].field)->name;
            const char *pre = "";
            switch (hash_fields[i].prereq) {
            case FDP__P_IPV4: pre = "ip,"; break;
            case FDP__P_IPV6: pre = "ipv6,"; break;
            case FDP__P_ARP: pre = "arp,"; break;
            case FDP__P_TCP: pre = "tcp,"; break;
            case FDP__P_UDP: pre = "udp,"; break;
            case FDP__P_SCTP: pre = "sctp,"; break;
            case FDP__P_IP_ANY: pre = "ip,"; break;
            default: break;
            }
            snprintf(text, sizeof text, "%s%s=%s", pre, fname, value);
            int error = fdp_packet_parse(text, &k, &msg);
            free(msg);
            if (error == ENOMEM) {
                return ENOMEM;
            }
            if (error) {
                return gerror(gp, value, "%s=%s: not a mask for %s", key,
                              value, hash_fields[i].name);
            }
            hf->mask = fdp__key_get(&k, hash_fields[i].field);
            if (!hf->mask) {
                return gerror(gp, value, "%s=%s: values are wildcards here "
                              "and must not be all-zeros", key, value);
            }
            hf->masked = hf->mask != fdp__field(hash_fields[i].field)->max;
        }
    }
    return 0;
}

/* The bucket's runnable list in action-set order (see "Buckets are action
 * sets"), or NULL with '*errorp' 0 if nothing would run. */
enum set_class {
    SET_NONE,                   /* Left out. */
    SET_STRIP_VLAN,             /* The slots, in the order they run. */
    SET_PUSH_VLAN,
    SET_DEC_TTL,
    SET_N_SLOTS,
    SET_FINAL_CT = SET_N_SLOTS, /* The finals, lowest first. */
    SET_FINAL_CT_CLEAR,
    SET_FINAL_RESUBMIT,
    SET_FINAL_OUTPUT,
    SET_FINAL_GROUP,
    SET_SET_OR_MOVE,
};

static enum set_class
classify_for_set(const struct fdp__action *a)
{
    switch ((enum fdp_action_type) a->type) {
    case FDP_ACT_STRIP_VLAN:
        return SET_STRIP_VLAN;
    case FDP_ACT_PUSH_VLAN:
        return SET_PUSH_VLAN;
    case FDP_ACT_DEC_TTL:
        return SET_DEC_TTL;
    case FDP_ACT_CT:
        return SET_FINAL_CT;
    case FDP_ACT_CT_CLEAR:
        return SET_FINAL_CT_CLEAR;
    case FDP_ACT_RESUBMIT:
        return SET_FINAL_RESUBMIT;
    case FDP_ACT_OUTPUT:
    case FDP_ACT_IN_PORT:
    case FDP_ACT_CONTROLLER:
    case FDP_ACT_RESERVED:
        /* controller is output:CONTROLLER to OpenFlow 1.1+, which is how
         * a bucket carries it. */
        return SET_FINAL_OUTPUT;
    case FDP_ACT_GROUP:
        return SET_FINAL_GROUP;
    case FDP_ACT_SET_FIELD:
    case FDP_ACT_MOVE:
    case FDP_ACT_SET_VLAN_VID:
    case FDP_ACT_SET_VLAN_PCP:
        return SET_SET_OR_MOVE;
    case FDP_ACT_SET_MASKED:
        return a->flags & FDP__ACT_WRITE_METADATA ? SET_NONE
                                                  : SET_SET_OR_MOVE;
    case FDP_ACT_SET_QUEUE:
        return SET_SET_OR_MOVE;
    case FDP_ACT_STACK_PUSH:
    case FDP_ACT_STACK_POP:
    case FDP_ACT_OUTPUT_REG:
    case FDP_ACT_NOTE:
    case FDP_ACT_POP_QUEUE:
    case FDP_ACT_CLONE:
    case FDP_ACT_METER:
    case FDP_ACT_LEARN:
    case FDP_ACT_FIN_TIMEOUT:
    case FDP_ACT_CHECK_PKT_LARGER:
        /* Not among the classes Open vSwitch's
         * ofpacts_execute_action_set() copies, so left out as it leaves
         * them out. */
    case FDP_ACT_GOTO_TABLE:
    case FDP_ACT_CONJUNCTION:
    case FDP_N_ACTION_TYPES:
        break;
    }
    return SET_NONE;
}

static int
make_action_set(const struct fdp_actions *acts, struct fdp_actions **setp)
{
    const struct fdp__action *slots[SET_N_SLOTS] = { NULL };
    const struct fdp__action *final = NULL;
    enum set_class final_class = SET_NONE;

    *setp = NULL;
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        enum set_class c = classify_for_set(a);
        if (c != SET_NONE && c < SET_N_SLOTS) {
            slots[c] = a;
        } else if (c >= SET_FINAL_CT && c <= SET_FINAL_GROUP
                   && c >= final_class) {
            final = a;
            final_class = c;
        }
    }
    if (!final) {
        return 0;
    }

    struct fdp__actions_builder b;
    fdp__actions_builder_init(&b);
    for (int i = 0; i < SET_N_SLOTS; i++) {
        if (slots[i]) {
            fdp__actions_add_record(&b, slots[i]);
        }
    }
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (classify_for_set(a) == SET_SET_OR_MOVE) {
            fdp__actions_add_record(&b, a);
        }
    }
    fdp__actions_add_record(&b, final);
    *setp = fdp__actions_finish(&b);
    return *setp ? 0 : ENOMEM;
}

/* Parses the bucket text [start, end) of 'gp->buf' (end is where the
 * next "bucket=" begins, or the string's end) into 'b'. */
static int
parse_bucket(struct gparser *gp, struct fdp_group *g, struct fdp__bucket *b,
             char *start, char *end)
{
    char saved = *end;
    char *s = start;
    char *key, *value;
    char *actions_at = NULL;
    int error = 0;

    b->weight = g->type == FDP__GROUP_SELECT ? 1 : 0;
    b->bucket_id = FDP__WATCH_NONE;
    b->watch_port = FDP__WATCH_NONE;
    b->watch_group = FDP__WATCH_NONE;
    *end = '\0';
    bool weight_given = false;
    for (;;) {
        char *before = s + strspn(s, ", \t\r\n");
        if (!next_key_value(&s, &key, &value)) {
            break;
        }
        if (!strcasecmp(key, "weight")) {
            uint32_t w = 0;
            error = parse_u32_arg(gp, key, value, UINT16_MAX, &w);
            b->weight = (uint16_t) w;
            weight_given = true;
        } else if (!strcasecmp(key, "watch_port")) {
            uint32_t port = FDP__WATCH_NONE;
            if (!strcasecmp(value, "any") || !strcasecmp(value, "none")) {
                port = FDP__WATCH_NONE;
            } else if (fdp__port_from_name(value, &port)) {
                if (port != FDP_PORT_CONTROLLER) {
                    error = gerror(gp, key, "%s: invalid watch_port", value);
                }
            } else {
                uint64_t v;
                if (!parse_u64(value, FDP_PORT_MAX - 1, &v)) {
                    error = gerror(gp, key, "%s: invalid watch_port", value);
                }
                port = (uint32_t) v;
            }
            b->watch_port = port;
        } else if (!strcasecmp(key, "watch_group")) {
            error = parse_u32_arg(gp, key, value, FDP_GROUP_MAX,
                                  &b->watch_group);
        } else if (!strcasecmp(key, "bucket_id")) {
            error = parse_u32_arg(gp, key, value, 0xffffff00u, &b->bucket_id);
        } else if (!strcasecmp(key, "actions") || !strcasecmp(key, "action")) {
            actions_at = value;
            break;
        } else {
            /* The first action: everything from here on is the action
             * list (Open vSwitch gathers the remaining pairs into it). */
            actions_at = before;
            break;
        }
        if (error) {
            *end = saved;
            return error;
        }
    }
    if (!actions_at) {
        *end = saved;
        return gerror(gp, start, "bucket must specify actions");
    }
    if (g->type == FDP__GROUP_FF && b->watch_port == FDP__WATCH_NONE
        && b->watch_group == FDP__WATCH_NONE) {
        *end = saved;
        return gerror(gp, start, "fast failover bucket requires watch_port "
                      "or watch_group");
    }
    if (weight_given && g->type != FDP__GROUP_SELECT && b->weight) {
        *end = saved;
        return gerror(gp, start, "Only select groups can have bucket "
                      "weights.");
    }

    /* Parse the actions with the flow parser, on a copy of the whole text
     * where everything but the actions is blanked, so that its messages
     * give columns of the group's text.  The actions start at least
     * "bucket=" and one more character in, so there is room for the
     * "actions=" keyword the flow parser looks for. */
    size_t len = strlen(gp->text);
    char *copy = malloc(len + 1);
    if (!copy) {
        *end = saved;
        return ENOMEM;
    }
    size_t from = (size_t) (actions_at - gp->buf);
    size_t to = (size_t) (end - gp->buf);
    /* Restore what next_key_value() cut into the actions' text. */
    memset(copy, ' ', len);
    copy[len] = '\0';
    memcpy(copy + from, gp->text + from, to - from);
    copy[to] = '\0';
    /* The flow parser's keyword goes just before the actions, over what
     * was blanked ("action=" is one shorter: the blank before it goes
     * too). */
    size_t kw = strlen("actions=");
    if (from < kw) {
        free(copy);
        *end = saved;
        return gerror(gp, actions_at, "bucket must specify actions");
    }
    memcpy(copy + from - kw, "actions=", kw);
    char *msg = NULL;
    error = fdp__bucket_actions_parse(copy, &b->actions, &msg);
    free(copy);
    *end = saved;
    if (error) {
        if (gp->errorp && !*gp->errorp) {
            *gp->errorp = msg;
        } else {
            free(msg);
        }
        return error;
    }
    for (const struct fdp__action *a = fdp__actions_first(b->actions); a;
         a = fdp__actions_next(b->actions, a)) {
        if (a->type == FDP_ACT_CONJUNCTION) {
            return gerror(gp, actions_at, "conjunction: not allowed in a "
                          "bucket");
        }
    }
    error = make_action_set(b->actions, &b->set);
    if (!error) {
        b->counters = counters_create();
        error = b->counters ? 0 : ENOMEM;
    }
    return error;
}

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int build_slots(struct fdp_group *g);

static int
parse_group(struct gparser *gp, struct fdp_group *g)
{
    char *buf = gp->buf;
    bool had_type = false, had_id = false, had_method = false;
    bool had_param = false;
    char *fields_at = NULL;
    int error = 0;

    /* The buckets come last: cut them off, and parse the rest first (the
     * type decides the buckets' defaults). */
    char *bkt = strstr(buf, "bucket=");
    if (bkt) {
        *bkt = '\0';
    }
    char *s = buf;
    char *key, *value;
    while (!error && next_key_value(&s, &key, &value)) {
        if (!strcmp(key, "group_id")) {
            error = parse_u32_arg(gp, key, value, FDP_GROUP_MAX,
                                  &g->group_id);
            had_id = true;
        } else if (!strcmp(key, "type")) {
            if (!strcmp(value, "all")) {
                g->type = FDP__GROUP_ALL;
            } else if (!strcmp(value, "select")) {
                g->type = FDP__GROUP_SELECT;
            } else if (!strcmp(value, "indirect")) {
                g->type = FDP__GROUP_INDIRECT;
            } else if (!strcmp(value, "ff") || !strcmp(value, "fast_failover")) {
                g->type = FDP__GROUP_FF;
            } else {
                error = gerror(gp, key, "invalid group type %s", value);
            }
            had_type = true;
        } else if (!strcmp(key, "selection_method")) {
            if (!strcmp(value, "hash")) {
                g->method = FDP__SEL_HASH;
            } else if (!strcmp(value, "dp_hash")) {
                g->method = FDP__SEL_DP_HASH;
            } else {
                error = gerror(gp, key, "selection_method=%s: unknown "
                               "selection method (hash or dp_hash)", value);
            }
            had_method = true;
        } else if (!strcmp(key, "selection_method_param")) {
            if (!parse_u64(value, UINT64_MAX, &g->method_param)) {
                error = gerror(gp, key, "selection_method_param=%s: not a "
                               "number", value);
            }
            had_param = true;
        } else if (!strcmp(key, "fields")) {
            fields_at = key;
            /* "fields(a,b)" arrives as one value; "fields=a" as one
             * field. */
            g->fields_paren = false;
            error = parse_hash_fields(gp, g, value);
            g->fields_paren = g->n_fields > 1;
        } else {
            error = gerror(gp, key, "unknown keyword %s", key);
        }
    }
    if (error) {
        return error;
    }
    if (!had_id) {
        return gerror(gp, NULL, "must specify a group_id");
    }
    if (!had_type) {
        return gerror(gp, NULL, "must specify a type");
    }
    if (g->n_fields && g->method != FDP__SEL_HASH) {
        return gerror(gp, fields_at, "fields may only be specified with "
                      "\"selection_method=hash\"");
    }
    if (had_param && !had_method) {
        return gerror(gp, NULL, "selection_method_param is only allowed "
                      "with \"selection_method\"");
    }
    if (had_method && g->type != FDP__GROUP_SELECT) {
        /* Open vSwitch keeps and prints it, and ignores it: so do we. */
    }

    /* The buckets. */
    if (bkt) {
        *bkt = 'b';
    }
    size_t alloc = 0;
    while (bkt) {
        char *start = bkt + strlen("bucket=");
        char *next = strstr(start, "bucket=");
        char *end = next ? next : start + strlen(start);
        if (g->n_buckets == FDP__GROUP_MAX_BUCKETS) {
            return gerror(gp, bkt, "more than %d buckets",
                          FDP__GROUP_MAX_BUCKETS);
        }
        if (g->n_buckets == alloc) {
            alloc = alloc ? 2 * alloc : 4;
            struct fdp__bucket *nb = realloc(g->buckets,
                                             alloc * sizeof *nb);
            if (!nb) {
                return ENOMEM;
            }
            g->buckets = nb;
        }
        struct fdp__bucket *b = &g->buckets[g->n_buckets];
        memset(b, 0, sizeof *b);
        g->n_buckets++;
        error = parse_bucket(gp, g, b, start, end);
        if (error) {
            return error;
        }
        bkt = next;
    }
    if (g->type == FDP__GROUP_INDIRECT && g->n_buckets > 1) {
        return gerror(gp, NULL, "Indirect groups can have at most one "
                      "bucket.");
    }

    /* Bucket ids: given ones must be unique; the others are numbered as
     * Open vSwitch numbers them, from one past the largest so far (0 for
     * the first). */
    uint32_t next_id = 0;
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        struct fdp__bucket *b = &g->buckets[i];
        if (b->bucket_id == FDP__WATCH_NONE) {
            b->bucket_id = next_id;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (g->buckets[j].bucket_id == b->bucket_id) {
                return gerror(gp, NULL, "duplicate bucket_id %" PRIu32,
                              b->bucket_id);
            }
        }
        if (b->bucket_id >= next_id) {
            next_id = b->bucket_id + 1;
        }
    }
    g->counters = counters_create();
    if (!g->counters) {
        return ENOMEM;
    }
    g->created_ms = now_ms();
    return g->type == FDP__GROUP_SELECT ? build_slots(g) : 0;
}

int
fdp_group_parse(const char *text, struct fdp_group **groupp, char **errorp)
{
    struct gparser gp = { .text = text, .errorp = errorp };
    struct fdp_group *g = calloc(1, sizeof *g);

    *groupp = NULL;
    if (errorp) {
        *errorp = NULL;
    }
    gp.buf = strdup(text);
    if (!g || !gp.buf) {
        free(g);
        free(gp.buf);
        return ENOMEM;
    }
    int error = parse_group(&gp, g);
    free(gp.buf);
    if (error) {
        fdp_group_destroy(g);
        return error;
    }
    *groupp = g;
    return 0;
}

int
fdp_group_parse_id(const char *text, uint32_t *group_id, char **errorp)
{
    struct gparser gp = { .text = text, .errorp = errorp };
    const char *v = text + strspn(text, " \t");

    if (errorp) {
        *errorp = NULL;
    }
    *group_id = FDP_GROUP_ALL;
    if (!*v) {
        return 0;
    }
    if (!strncmp(v, "group_id=", 9)) {
        v += 9;
    }
    gp.buf = (char *) text;
    if (!strcasecmp(v, "all")) {
        return 0;
    }
    uint64_t id;
    if (!parse_u64(v, FDP_GROUP_MAX, &id)) {
        return gerror(&gp, v, "%s: not a group id (0..%u or all)", v,
                      FDP_GROUP_MAX);
    }
    *group_id = (uint32_t) id;
    return 0;
}

void
fdp_group_destroy(struct fdp_group *g)
{
    if (g) {
        for (uint32_t i = 0; i < g->n_buckets; i++) {
            fdp_actions_destroy(g->buckets[i].actions);
            fdp_actions_destroy(g->buckets[i].set);
            free(g->buckets[i].counters);
        }
        free(g->buckets);
        free(g->slots);
        free(g->counters);
        free(g);
    }
}

uint32_t
fdp_group_get_id(const struct fdp_group *g)
{
    return g->group_id;
}

/* ---------------------------------------------------------------------- */
/* Formatting.                                                             */

static void
format_mask(struct fdp__ds *ds, const struct fdp__hash_field *hf)
{
    enum fdp_field f = hash_fields[hf->name].field;

    fdp__format_value(ds, f, hf->mask);
}

char *
fdp_group_format(const struct fdp_group *g)
{
    static const char *const types[] = { "all", "select", "indirect", "ff" };
    struct fdp__ds ds = FDP__DS_INIT;
    bool of15 = g->method != FDP__SEL_DEFAULT;
    struct fdp_match *empty = fdp_match_create();

    if (!empty) {
        return NULL;
    }
    fdp__ds_printf(&ds, "group_id=%" PRIu32 ",type=%s", g->group_id,
                   types[g->type]);
    if (of15) {
        fdp__ds_printf(&ds, ",selection_method=%s",
                       g->method == FDP__SEL_HASH ? "hash" : "dp_hash");
        if (g->method_param) {
            fdp__ds_printf(&ds, ",selection_method_param=%" PRIu64,
                           g->method_param);
        }
        if (g->n_fields) {
            fdp__ds_put(&ds, g->n_fields > 1 ? ",fields(" : ",fields=");
            for (uint32_t i = 0; i < g->n_fields; i++) {
                const struct fdp__hash_field *hf = &g->fields[i];
                fdp__ds_put(&ds, hash_fields[hf->name].name);
                if (hf->masked) {
                    fdp__ds_putc(&ds, '=');
                    format_mask(&ds, hf);
                }
                fdp__ds_putc(&ds, ',');
            }
            fdp__ds_chomp(&ds, ',');
            if (g->n_fields > 1) {
                fdp__ds_putc(&ds, ')');
            }
        }
    }
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        const struct fdp__bucket *b = &g->buckets[i];
        fdp__ds_put(&ds, ",bucket=");
        if (of15) {
            fdp__ds_printf(&ds, "bucket_id:%" PRIu32 ",", b->bucket_id);
        }
        if (b->weight != (g->type == FDP__GROUP_SELECT ? 1 : 0)) {
            fdp__ds_printf(&ds, "weight:%u,", b->weight);
        }
        if (b->watch_port != FDP__WATCH_NONE) {
            const char *name = fdp__port_name(b->watch_port);
            if (name) {
                fdp__ds_printf(&ds, "watch_port:%s,", name);
            } else {
                fdp__ds_printf(&ds, "watch_port:%" PRIu32 ",",
                               b->watch_port);
            }
        }
        if (b->watch_group != FDP__WATCH_NONE) {
            fdp__ds_printf(&ds, "watch_group:%" PRIu32 ",", b->watch_group);
        }
        char *acts = fdp_actions_format(b->actions, empty);
        if (!acts) {
            fdp__ds_destroy(&ds);
            fdp_match_destroy(empty);
            return NULL;
        }
        fdp__ds_printf(&ds, "actions=%s", acts);
        free(acts);
    }
    fdp_match_destroy(empty);
    return fdp__ds_steal(&ds);
}

void
fdp_group_stats_destroy(struct fdp_group_stats *stats)
{
    if (stats) {
        free(stats->buckets);
        stats->buckets = NULL;
    }
}

char *
fdp_group_stats_format(const struct fdp_group_stats *st, int64_t now_ms_)
{
    struct fdp__ds ds = FDP__DS_INIT;
    int64_t ms = now_ms_ - st->created_ms;

    if (ms < 0) {
        ms = 0;
    }
    fdp__ds_printf(&ds, "group_id=%" PRIu32 ",duration=%" PRId64 ".%03ds,"
                   "ref_count=%" PRIu32 ",packet_count=%" PRIu64
                   ",byte_count=%" PRIu64, st->group_id, ms / 1000,
                   (int) (ms % 1000), st->ref_count, st->n_packets,
                   st->n_bytes);
    for (size_t i = 0; i < st->n_buckets; i++) {
        fdp__ds_printf(&ds, ",bucket%zu:packet_count=%" PRIu64
                       ",byte_count=%" PRIu64, i, st->buckets[i].n_packets,
                       st->buckets[i].n_bytes);
    }
    return fdp__ds_steal(&ds);
}

/* ---------------------------------------------------------------------- */
/* Selection.                                                              */

static uint64_t
round_up_pow2(uint64_t n)
{
    uint64_t p = 1;

    while (p < n) {
        p <<= 1;
    }
    return p;
}

/* The slot table of select group 'g' (see "Selection"). */
static int
build_slots(struct fdp_group *g)
{
    uint64_t total = 0;
    uint32_t min_weight = UINT16_MAX, n_weighted = 0;

    for (uint32_t i = 0; i < g->n_buckets; i++) {
        uint32_t w = g->buckets[i].weight;
        if (w) {
            total += w;
            n_weighted++;
            min_weight = w < min_weight ? w : min_weight;
        }
    }
    if (!total) {
        return 0;
    }
    uint64_t n = 16;
    uint64_t want = 8 * (uint64_t) n_weighted;
    n = want > n ? want : n;
    uint64_t by_weight = (total + min_weight - 1) / min_weight;
    n = by_weight > n ? by_weight : n;
    n = round_up_pow2(n);
    if (n > FDP__GROUP_MAX_SLOTS) {
        n = FDP__GROUP_MAX_SLOTS;
    }
    g->slots = malloc(n * sizeof *g->slots);
    uint32_t *divisor = calloc(g->n_buckets, sizeof *divisor);
    if (!g->slots || !divisor) {
        free(divisor);
        return ENOMEM;
    }
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        divisor[i] = 1;
    }
    /* Webster: the next slot goes to the highest weight / divisor, the
     * divisors being 1, 3, 5... (compared exactly, as products). */
    for (uint64_t s = 0; s < n; s++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < g->n_buckets; i++) {
            if (!g->buckets[i].weight) {
                continue;
            }
            if (best == UINT32_MAX
                || (uint64_t) g->buckets[i].weight * divisor[best]
                   > (uint64_t) g->buckets[best].weight * divisor[i]) {
                best = i;
            }
        }
        g->slots[s] = (uint16_t) best;
        divisor[best] += 2;
    }
    free(divisor);
    g->slot_mask = (uint32_t) (n - 1);
    return 0;
}

static bool group_is_live(const struct fdp__group_set *, uint32_t id,
                          int depth);

static bool
port_is_live(const struct fdp__group_set *set, uint32_t port)
{
    return port < 65536 && (set->live[port / 64] >> (port % 64)) & 1;
}

/* Open vSwitch's bucket_is_alive(). */
static bool
bucket_is_live(const struct fdp__group_set *set, const struct fdp_group *g,
               const struct fdp__bucket *b, int depth)
{
    if (depth >= FDP__GROUP_MAX_CHAIN) {
        return false;
    }
    if (g->type == FDP__GROUP_SELECT && !b->weight) {
        return false;
    }
    if (b->watch_port == FDP__WATCH_NONE
        && b->watch_group == FDP__WATCH_NONE) {
        return true;
    }
    return (b->watch_port != FDP__WATCH_NONE
            && b->watch_port != FDP_PORT_CONTROLLER
            && port_is_live(set, b->watch_port))
           || (b->watch_group != FDP__WATCH_NONE
               && group_is_live(set, b->watch_group, depth + 1));
}

static const struct fdp__bucket *
first_live(const struct fdp__group_set *set, const struct fdp_group *g,
           int depth)
{
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        if (bucket_is_live(set, g, &g->buckets[i], depth)) {
            return &g->buckets[i];
        }
    }
    return NULL;
}

static bool
group_is_live(const struct fdp__group_set *set, uint32_t id, int depth)
{
    const struct fdp_group *g = fdp__group_set_find(set, id);

    return g && first_live(set, g, depth) != NULL;
}

const struct fdp__bucket *
fdp__group_ff_bucket(const struct fdp__group_set *set,
                     const struct fdp_group *g)
{
    return first_live(set, g, 0);
}

static uint32_t
mix32(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return (uint32_t) h;
}

/* The 5-tuple hash (default: symmetric, both directions alike). */
static uint32_t
hash_l4(const struct fdp_key *key, bool symmetric, uint32_t basis)
{
    uint64_t w[6] = { 0 };
    fdp_u128 type = fdp__key_get(key, FDP_F_DL_TYPE);
    fdp_u128 a = 0, b = 0;

    if (type == FDP_ETH_TYPE_IP) {
        a = fdp__key_get(key, FDP_F_NW_SRC);
        b = fdp__key_get(key, FDP_F_NW_DST);
    } else if (type == FDP_ETH_TYPE_IPV6) {
        a = fdp__key_get(key, FDP_F_IPV6_SRC);
        b = fdp__key_get(key, FDP_F_IPV6_DST);
    } else {
        a = fdp__key_get(key, FDP_F_DL_SRC);
        b = fdp__key_get(key, FDP_F_DL_DST);
    }
    uint64_t pa = 0, pb = 0, proto = 0;
    if (key_meets(key, FDP__P_IP_ANY)) {
        proto = (uint64_t) fdp__key_get(key, FDP_F_NW_PROTO);
        if (proto == FDP_IPPROTO_TCP || proto == FDP_IPPROTO_UDP
            || proto == FDP_IPPROTO_SCTP) {
            pa = (uint64_t) fdp__key_get(key, FDP_F_TP_SRC);
            pb = (uint64_t) fdp__key_get(key, FDP_F_TP_DST);
        }
    }
    if (symmetric) {
        /* Each side as one (address, port) pair, the smaller first. */
        if (a > b || (a == b && pa > pb)) {
            fdp_u128 t = a;
            a = b;
            b = t;
            uint64_t tp = pa;
            pa = pb;
            pb = tp;
        }
    }
    w[0] = (uint64_t) (a >> 64);
    w[1] = (uint64_t) a;
    w[2] = (uint64_t) (b >> 64);
    w[3] = (uint64_t) b;
    w[4] = pa << 16 | pb;
    w[5] = proto | (uint64_t) type << 8;
    return mix32(fdp_hash_jhash2(w, 6, basis));
}

static uint32_t
hash_fields_of(const struct fdp_group *g, const struct fdp_key *key,
               uint32_t basis)
{
    uint64_t w[2 * FDP__GROUP_MAX_FIELDS];
    size_t n = 0;

    for (uint32_t i = 0; i < g->n_fields; i++) {
        const struct fdp__hash_field *hf = &g->fields[i];
        if (!key_meets(key, hash_fields[hf->name].prereq)) {
            continue;
        }
        fdp_u128 v = fdp__key_get(key, hash_fields[hf->name].field);
        if (hf->masked) {
            v &= hf->mask;
        }
        w[n++] = (uint64_t) (v >> 64);
        w[n++] = (uint64_t) v;
    }
    return mix32(fdp_hash_jhash2(w, n, basis));
}

const struct fdp__bucket *
fdp__group_select_bucket(const struct fdp__group_set *set,
                         const struct fdp_group *g,
                         const struct fdp_key *key)
{
    if (!g->slots) {
        return NULL;
    }
    uint32_t basis = (uint32_t) g->method_param;
    uint32_t h = g->method == FDP__SEL_HASH && g->n_fields
                 ? hash_fields_of(g, key, basis)
                 : hash_l4(key, g->method == FDP__SEL_DEFAULT, basis);
    for (uint32_t i = 0; i <= g->slot_mask; i++) {
        const struct fdp__bucket *b
            = &g->buckets[g->slots[(h + i) & g->slot_mask]];
        if (bucket_is_live(set, g, b, 0)) {
            return b;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------------- */
/* Snapshots.                                                              */

const struct fdp_group *
fdp__group_set_find(const struct fdp__group_set *set, uint32_t id)
{
    size_t lo = 0, hi = set ? set->n : 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t mid_id = set->groups[mid]->group_id;
        if (mid_id == id) {
            return set->groups[mid];
        } else if (mid_id < id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

static struct fdp__group_set *
set_clone(const struct fdp__group_set *old, size_t extra)
{
    struct fdp__group_set *s = malloc(sizeof *s);

    if (!s) {
        return NULL;
    }
    *s = *old;
    s->groups = malloc((old->n + extra + 1) * sizeof *s->groups);
    if (!s->groups) {
        free(s);
        return NULL;
    }
    if (old->n) {
        memcpy(s->groups, old->groups, old->n * sizeof *s->groups);
    }
    return s;
}

static void
set_free(struct fdp__group_set *s)
{
    if (s) {
        free(s->groups);
        free(s);
    }
}

static void
set_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();     /* What readers did happens before. */
    set_free(CONTAINER_OF(head, struct fdp__group_set, rcu));
}

static void
group_free_rcu(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();     /* What readers did happens before. */
    fdp_group_destroy(CONTAINER_OF(head, struct fdp_group, rcu));
}

static bool
set_has(const struct fdp__group_set *s, const struct fdp_group *g)
{
    return fdp__group_set_find(s, g->group_id) == g;
}

int
fdp__group_table_init(struct fdp__group_table *gt)
{
    memset(gt, 0, sizeof *gt);
    gt->pub = calloc(1, sizeof *gt->pub);
    return gt->pub ? 0 : ENOMEM;
}

void
fdp__group_table_destroy(struct fdp__group_table *gt)
{
    if (gt->txn) {
        fdp__group_table_end(gt, false);
    }
    if (gt->pub) {
        for (size_t i = 0; i < gt->pub->n; i++) {
            fdp_group_destroy(gt->pub->groups[i]);
        }
        set_free(gt->pub);
    }
    gt->pub = NULL;
}

/* The transaction's set, made on its first change. */
static struct fdp__group_set *
txn_set(struct fdp__group_table *gt, size_t extra)
{
    if (!gt->txn) {
        gt->txn = set_clone(gt->pub, extra);
    } else if (extra) {
        struct fdp_group **g = realloc(gt->txn->groups,
                                       (gt->txn->n + extra + 1)
                                       * sizeof *g);
        if (!g) {
            return NULL;
        }
        gt->txn->groups = g;
    }
    return gt->txn;
}

const struct fdp_group *
fdp__group_table_find(const struct fdp__group_table *gt, uint32_t id)
{
    return fdp__group_set_find(gt->txn ? gt->txn : gt->pub, id);
}

int
fdp__group_table_check_actions(const struct fdp__group_table *gt,
                               const struct fdp_actions *acts)
{
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (a->type == FDP_ACT_GROUP && !fdp__group_table_find(gt, a->arg)) {
            return ENOENT;
        }
    }
    return 0;
}

bool
fdp__group_table_end(struct fdp__group_table *gt, bool commit)
{
    struct fdp__group_set *txn = gt->txn;

    gt->txn = NULL;
    if (!txn) {
        return false;
    }
    if (!commit) {
        /* Groups only the transaction held were never published. */
        for (size_t i = 0; i < txn->n; i++) {
            if (!set_has(gt->pub, txn->groups[i])) {
                fdp_group_destroy(txn->groups[i]);
            }
        }
        set_free(txn);
        return false;
    }
    gt->old = gt->pub;
    gt->pub = txn;
    return true;
}

void
fdp__group_table_reclaim(struct fdp__group_table *gt)
{
    struct fdp__group_set *old = gt->old;

    gt->old = NULL;
    if (!old) {
        return;
    }
    for (size_t i = 0; i < old->n; i++) {
        if (!set_has(gt->pub, old->groups[i])) {
            fdp__rcu_defer(&old->groups[i]->rcu, group_free_rcu);
        }
    }
    fdp__rcu_defer(&old->rcu, set_free_rcu);
}

/* ---------------------------------------------------------------------- */
/* The pipeline's groups.                                                  */

bool
fdp__actions_name_group(const struct fdp_actions *acts, uint32_t group_id)
{
    for (const struct fdp__action *a = fdp__actions_first(acts); a;
         a = fdp__actions_next(acts, a)) {
        if (a->type == FDP_ACT_GROUP
            && (group_id == FDP_GROUP_ALL || a->arg == group_id)) {
            return true;
        }
    }
    return false;
}

/* True if group 'id' reaches group 'target' through buckets' group:N and
 * watch_group in 'set', with 'g' (not yet in 'set') standing for its id;
 * 'depth' bounds the walk (a longer chain counts as a loop). */
static bool
reaches(const struct fdp__group_set *set, const struct fdp_group *g,
        uint32_t id, uint32_t target, int depth)
{
    if (id == target) {
        return true;
    }
    if (depth >= FDP__GROUP_MAX_CHAIN) {
        return true;
    }
    const struct fdp_group *h = id == g->group_id ? g
                                : fdp__group_set_find(set, id);
    if (!h) {
        return false;
    }
    for (uint32_t i = 0; i < h->n_buckets; i++) {
        const struct fdp__bucket *b = &h->buckets[i];
        if (b->watch_group != FDP__WATCH_NONE
            && reaches(set, g, b->watch_group, target, depth + 1)) {
            return true;
        }
        for (const struct fdp__action *a = fdp__actions_first(b->actions);
             a; a = fdp__actions_next(b->actions, a)) {
            if (a->type == FDP_ACT_GROUP
                && reaches(set, g, a->arg, target, depth + 1)) {
                return true;
            }
        }
    }
    return false;
}

/* Checks 'g''s references against the transaction's groups. */
static int
check_group_refs(const struct fdp__group_set *set, const struct fdp_group *g)
{
    for (uint32_t i = 0; i < g->n_buckets; i++) {
        const struct fdp__bucket *b = &g->buckets[i];
        if (b->watch_group != FDP__WATCH_NONE) {
            if (reaches(set, g, b->watch_group, g->group_id, 1)) {
                return ELOOP;
            }
        }
        for (const struct fdp__action *a = fdp__actions_first(b->actions);
             a; a = fdp__actions_next(b->actions, a)) {
            if (a->type != FDP_ACT_GROUP) {
                continue;
            }
            if (reaches(set, g, a->arg, g->group_id, 1)) {
                return ELOOP;
            }
        }
    }
    return 0;
}

static int
group_add(struct fdp__group_table *gt, struct fdp_group *g,
          enum fdp_group_command command)
{
    const struct fdp_group *old = fdp__group_table_find(gt, g->group_id);

    if (old && command == FDP_GROUP_ADD) {
        return EEXIST;
    }
    if (!old && command == FDP_GROUP_MODIFY) {
        return ENOENT;
    }
    struct fdp__group_set *s = txn_set(gt, 1);
    if (!s) {
        return ENOMEM;
    }
    int error = check_group_refs(s, g);
    if (error) {
        return error;
    }
    size_t i = 0;
    while (i < s->n && s->groups[i]->group_id < g->group_id) {
        i++;
    }
    if (old) {
        /* Replaced: freed at commit if published, now if not. */
        if (!set_has(gt->pub, s->groups[i])) {
            fdp_group_destroy(s->groups[i]);
        }
        s->groups[i] = g;
    } else {
        memmove(&s->groups[i + 1], &s->groups[i],
                (s->n - i) * sizeof *s->groups);
        s->groups[i] = g;
        s->n++;
    }
    return 0;
}

int
fdp_pipeline_group_add(struct fdp_pipeline *p, struct fdp_group *g,
                       enum fdp_group_command command)
{
    if (!g) {
        return EINVAL;
    }
    bool started = fdp__pipeline_auto_begin(p);
    int error = group_add(fdp__pipeline_groups(p), g, command);

    if (error) {
        fdp_group_destroy(g);
    }
    return fdp__pipeline_auto_end(p, started, error);
}

int
fdp_pipeline_group_del(struct fdp_pipeline *p, uint32_t group_id,
                       size_t *n_flows)
{
    bool started = fdp__pipeline_auto_begin(p);
    struct fdp__group_table *gt = fdp__pipeline_groups(p);
    size_t n = 0;
    int error = 0;

    if (n_flows) {
        *n_flows = 0;
    }
    if (group_id != FDP_GROUP_ALL && !fdp__group_table_find(gt, group_id)) {
        return fdp__pipeline_auto_end(p, started, 0);
    }
    error = fdp__pipeline_remove_group_users(p, group_id, &n);
    struct fdp__group_set *s = error ? NULL : txn_set(gt, 0);
    if (!error && !s) {
        error = ENOMEM;
    }
    if (!error) {
        size_t out = 0;
        for (size_t i = 0; i < s->n; i++) {
            struct fdp_group *g = s->groups[i];
            if (group_id == FDP_GROUP_ALL || g->group_id == group_id) {
                if (!set_has(gt->pub, g)) {
                    fdp_group_destroy(g);
                }
            } else {
                s->groups[out++] = g;
            }
        }
        s->n = out;
        /* A group whose bucket named the deleted one keeps the bucket;
         * composing it finds no group there and ends the bucket, as Open
         * vSwitch's "output to nonexistent group" does. */
    }
    if (n_flows) {
        *n_flows = error ? 0 : n;
    }
    return fdp__pipeline_auto_end(p, started, error);
}

int
fdp_pipeline_set_port_live(struct fdp_pipeline *p, uint32_t port, bool live)
{
    if (port > 0xffff) {
        return EINVAL;
    }
    bool started = fdp__pipeline_auto_begin(p);
    struct fdp__group_table *gt = fdp__pipeline_groups(p);
    const struct fdp__group_set *cur = gt->txn ? gt->txn : gt->pub;
    int error = 0;

    if (port_is_live(cur, port) != live) {
        struct fdp__group_set *s = txn_set(gt, 0);
        if (!s) {
            error = ENOMEM;
        } else if (live) {
            s->live[port / 64] |= UINT64_C(1) << (port % 64);
        } else {
            s->live[port / 64] &= ~(UINT64_C(1) << (port % 64));
        }
    }
    return fdp__pipeline_auto_end(p, started, error);
}

/* ---------------------------------------------------------------------- */
/* Dumps.                                                                  */

static void
sum_counters(const struct fdp__rule_counters *c, uint64_t *np, uint64_t *nb)
{
    *np = *nb = 0;
    for (unsigned int i = 0; i < FDP__STATS_SHARDS; i++) {
        *np += __atomic_load_n(&c->shard[i].n_packets, __ATOMIC_RELAXED);
        *nb += __atomic_load_n(&c->shard[i].n_bytes, __ATOMIC_RELAXED);
    }
}

struct refs_aux {
    uint32_t *counts;           /* Per group of the set, by index. */
    const struct fdp__group_set *set;
};

static bool
count_refs(const struct fdp_rule *rule, void *aux_)
{
    struct refs_aux *aux = aux_;
    struct fdp_flow_spec spec;
    struct fdp_match m;

    fdp_rule_get_spec(rule, &spec, &m);
    for (const struct fdp__action *a = fdp__actions_first(spec.actions); a;
         a = fdp__actions_next(spec.actions, a)) {
        if (a->type != FDP_ACT_GROUP) {
            continue;
        }
        const struct fdp_group *g = fdp__group_set_find(aux->set, a->arg);
        if (g) {
            /* Index by binary search's result: the set is sorted. */
            size_t lo = 0, hi = aux->set->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (aux->set->groups[mid] == g) {
                    aux->counts[mid]++;
                    break;
                } else if (aux->set->groups[mid]->group_id < g->group_id) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
        }
    }
    return true;
}

int
fdp_pipeline_group_dump(struct fdp_pipeline *p, uint32_t group_id,
                        bool with_stats, fdp_group_dump_cb *cb, void *aux)
{
    int error = 0;

    fdp_table_read_lock();
    const struct fdp__group_set *set = fdp__pipeline_view(p)->groups;
    uint32_t *refs = NULL;
    if (with_stats && set->n) {
        refs = calloc(set->n, sizeof *refs);
        if (!refs) {
            fdp_table_read_unlock();
            return ENOMEM;
        }
        struct refs_aux ra = { refs, set };
        fdp_pipeline_for_each(p, FDP_TABLE_ALL, count_refs, &ra);
    }
    for (size_t i = 0; i < set->n && !error; i++) {
        const struct fdp_group *g = set->groups[i];
        if (group_id != FDP_GROUP_ALL && g->group_id != group_id) {
            continue;
        }
        struct fdp_group_stats st = { .group_id = g->group_id };
        if (with_stats) {
            st.ref_count = refs[i];
            st.created_ms = g->created_ms;
            sum_counters(g->counters, &st.n_packets, &st.n_bytes);
            st.n_buckets = g->n_buckets;
            st.buckets = calloc(g->n_buckets ? g->n_buckets : 1,
                                sizeof *st.buckets);
            if (!st.buckets) {
                error = ENOMEM;
                break;
            }
            for (uint32_t k = 0; k < g->n_buckets; k++) {
                sum_counters(g->buckets[k].counters,
                             &st.buckets[k].n_packets,
                             &st.buckets[k].n_bytes);
            }
        }
        bool go_on = cb(aux, g, with_stats ? &st : NULL);
        fdp_group_stats_destroy(&st);
        if (!go_on) {
            break;
        }
    }
    free(refs);
    fdp_table_read_unlock();
    return error;
}
