/*
 * Tunnel ports: VXLAN, Geneve and GRE with native encapsulation.
 *
 * What it is for
 * ==============
 * Open vSwitch's userspace tunnelling (lib/netdev-native-tnl.c,
 * lib/tnl-ports.c, lib/netdev-vport.c, ofproto/tunnel.c): a tunnel port is
 * an OpenFlow port with no device of its own.  What is output to it is
 * encapsulated and sent out of the underlay port that the underlay's
 * route and neighbour tables name (datapath/underlay.h); tunnel packets
 * arriving on any port for a local address are popped and continue as
 * received on the tunnel port, with the tun_* fields of their key filled.
 *
 * Configuration
 * =============
 * "vxlan:", "geneve:" and "gre:" take Open vSwitch's options
 * (fdp__tnl_cfg_parse()): remote_ip=IP|flow, local_ip=IP|flow,
 * key=N|flow (or in_key and out_key apart), dst_port=N, tos=N|inherit,
 * ttl=N|inherit, df_default=true|false, csum=true|false, and for VXLAN
 * exts=gbp.  Addresses may be IPv4 or IPv6.
 *
 * Send
 * ====
 * The datapath's output (datapath/dp.c, exec_output()) hands a packet for
 * a tunnel port to fdp__tnl_send(), which does what Open vSwitch's
 * tnl_port_send() and native tunnel push do together:
 *   1. the tunnel metadata: the key's tun_* fields (what the flow set),
 *      overridden by the port's fixed options (remote_ip, local_ip,
 *      out_key, tos, ttl), tos and ttl inherited from the inner IP header
 *      with inherit, the inner ECN always carried out (CE as ECT(0)), DF
 *      and checksum flags from the options;
 *   2. the header: from the pmd's cache of prebuilt headers, keyed by the
 *      port and that metadata and valid while the underlay's version
 *      (fdp__underlay_version()) is the one it was built at; on a miss the
 *      underlay resolves the destination to an underlay port, a source
 *      address and the two MACs, and tnl-header.c builds the header;
 *   3. the push: the header goes into the frame's headroom (the packet is
 *      moved forward in its frame if a Geneve header with many options
 *      over IPv6 needs more than the 192 bytes there), lengths and
 *      checksums completed, the UDP source port from the flow hash.
 * A packet that cannot be sent (no tun_dst for remote_ip=flow, no route,
 * a neighbour not known yet: the underlay has asked and the packet is
 * dropped, as Open vSwitch does) is dropped and counted with its reason.
 *
 * Receive
 * =======
 * The port set the pmds read carries a receive set (struct
 * fdp__tnl_rx_set) of its tunnel ports: the (kind, UDP port) endpoints to
 * watch and the ports behind each.  For each received packet the datapath
 * asks fdp__tnl_rx_candidate() (protocol and UDP destination port: a few
 * compares on the key) and for a candidate fdp__tnl_receive(), which
 * checks that the destination address is local (the underlay's), pops the
 * outer headers in place (the frame's data start moves forward; nothing
 * is copied), chooses the port as Open vSwitch's tnl_find() does and
 * re-extracts the inner packet as received on it (an outer ECN mark of
 * congestion goes onto the inner packet, RFC 6040, as Open vSwitch's
 * tnl_process_ecn() does).  The port chosen is the
 * most specific that takes the packet, in Open vSwitch's order: a fixed
 * in_key equal to the packet's key before key=flow, then a fixed
 * remote_ip equal to the packet's source before remote_ip=flow, then a
 * fixed local_ip equal to the packet's destination before none before
 * local_ip=flow.  A packet for a local address and a tunnel's UDP port
 * that no port takes (an unknown VNI, a remote no port names), or that
 * fails the header checks (tnl-header.c), is dropped and counted on the
 * endpoint's first port with its reason.  UDP to a tunnel's port for an
 * address that is not local is an ordinary packet.
 *
 * Invariants and thread-safety
 * ============================
 * A port's configuration never changes after it is opened (a change is a
 * delete and an add, which gives the port a new generation number, so no
 * cached header outlives its port's options).  The receive set is
 * immutable, published and freed with its port set under RCU.  Counters
 * are relaxed atomics.  The header cache is the pmd's own.
 */
#include <config.h>

#include "datapath/tunnel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/hash.h>

#include "datapath/bytes.h"
#include "datapath/dp-private.h"
#include "datapath/execute.h"
#include "datapath/extract-internal.h"
#include "datapath/underlay.h"
#include <flowdp/pipeline.h>

#include "lib/ds.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/tlv-map.h"
#include "lib/util.h"

#define DEFAULT_TTL 64
#define VXLAN_PORT 4789
#define GENEVE_PORT 6081

struct tnl_port {
    struct fdp__port up;
    struct fdp__tnl_cfg cfg;
    uint64_t gen;               /* Unique per opened port: the header
                                 * cache's key. */
    struct fdp__tnl_stats stats;    /* Relaxed atomics. */
};

static uint64_t next_gen = 1;   /* Atomic. */

static struct tnl_port *
tnl_port_cast(const struct fdp__port *port)
{
    return (struct tnl_port *) port;
}

static const char *
kind_name(enum fdp__tnl_kind kind)
{
    return kind == FDP__TNL_VXLAN ? "vxlan"
           : kind == FDP__TNL_GENEVE ? "geneve" : "gre";
}

/* ---------------------------------------------------------------------- */
/* Configuration.                                                          */

/* Parses an address option: "flow", or an IPv4 or IPv6 address. */
static int
parse_ip(const char *type, const char *name, const char *value, bool *flow,
         struct in6_addr *addr, char **errorp)
{
    struct in_addr in4;

    *flow = false;
    if (!strcmp(value, "flow")) {
        *flow = true;
        return 0;
    }
    if (inet_pton(AF_INET, value, &in4) == 1) {
        fdp__tnl_addr_from_ipv4(addr, ntohl(in4.s_addr));
        return 0;
    }
    if (inet_pton(AF_INET6, value, addr) == 1
        && !fdp__tnl_addr_is_ipv4(addr)) {
        return 0;
    }
    *errorp = fdp__xasprintf("%s: %s=%s is not an IP address or \"flow\"",
                             type, name, value);
    return EINVAL;
}

static bool
addr_is_multicast(const struct in6_addr *a)
{
    return fdp__tnl_addr_is_ipv4(a) ? (fdp__tnl_addr_ipv4(a) >> 28) == 0xe
                                    : a->s6_addr[0] == 0xff;
}

static bool
addr_is_any(const struct in6_addr *a)
{
    static const struct in6_addr zero;
    return !memcmp(a, &zero, sizeof zero)
           || (fdp__tnl_addr_is_ipv4(a) && !fdp__tnl_addr_ipv4(a));
}

/* Parses a number option from 'min' to 'max'. */
static int
parse_uint(const char *type, const char *name, const char *value,
           uint64_t min, uint64_t max, uint64_t *out, char **errorp)
{
    char *end;

    errno = 0;
    unsigned long long v = strtoull(value, &end, 0);
    if (errno || *end || value[0] == '-' || !value[0] || v < min
        || v > max) {
        *errorp = fdp__xasprintf("%s: %s=%s is not a number from %" PRIu64
                                 " to %" PRIu64, type, name, value, min,
                                 max);
        return EINVAL;
    }
    *out = v;
    return 0;
}

static int
parse_bool(const char *type, const char *name, const char *value, bool *out,
           char **errorp)
{
    if (!strcmp(value, "true")) {
        *out = true;
    } else if (!strcmp(value, "false")) {
        *out = false;
    } else {
        *errorp = fdp__xasprintf("%s: %s=%s is not true or false", type,
                                 name, value);
        return EINVAL;
    }
    return 0;
}

/* A key option ("flow" or a number that fits the protocol's key). */
static int
parse_key(const char *type, const char *name, const char *value,
          uint64_t max, uint64_t *key, bool *flow, char **errorp)
{
    *flow = !strcmp(value, "flow");
    *key = 0;
    return *flow ? 0 : parse_uint(type, name, value, 0, max, key, errorp);
}

enum { O_REMOTE, O_LOCAL, O_KEY, O_IN_KEY, O_OUT_KEY, O_DST_PORT, O_TOS,
       O_TTL, O_DF, O_CSUM, O_EXTS, N_OPTS };

/* The options after parsing: the checks between options. */
static int
check_cfg(const char *type, const struct fdp__port_arg *o,
          struct fdp__tnl_cfg *cfg, char **errorp)
{
    if (!o[O_REMOTE].value) {
        *errorp = fdp__xasprintf("%s: remote_ip=IP or remote_ip=flow is "
                                 "required", type);
        return EINVAL;
    }
    if (!cfg->remote_flow && addr_is_multicast(&cfg->remote)) {
        *errorp = fdp__xasprintf("%s: multicast remote_ip=%s is not "
                                 "allowed", type, o[O_REMOTE].value);
        return EINVAL;
    }
    if (!cfg->remote_flow && addr_is_any(&cfg->remote)) {
        *errorp = fdp__xasprintf("%s: remote_ip=%s is not a host address",
                                 type, o[O_REMOTE].value);
        return EINVAL;
    }
    if (cfg->local_flow && !cfg->remote_flow) {
        *errorp = fdp__xasprintf("%s: local_ip=flow needs remote_ip=flow",
                                 type);
        return EINVAL;
    }
    if (cfg->local_set && !cfg->remote_flow
        && fdp__tnl_addr_is_ipv4(&cfg->local)
           != fdp__tnl_addr_is_ipv4(&cfg->remote)) {
        *errorp = fdp__xasprintf("%s: remote_ip and local_ip must be of the "
                                 "same address family", type);
        return EINVAL;
    }
    return 0;
}

int
fdp__tnl_cfg_parse(enum fdp__tnl_kind kind, const char *args,
                   struct fdp__tnl_cfg *cfg, char **errorp)
{
    const char *type = kind_name(kind);
    struct fdp__port_arg o[N_OPTS] = {
        [O_REMOTE] = { "remote_ip", NULL }, [O_LOCAL] = { "local_ip", NULL },
        [O_KEY] = { "key", NULL }, [O_IN_KEY] = { "in_key", NULL },
        [O_OUT_KEY] = { "out_key", NULL },
        [O_DST_PORT] = { "dst_port", NULL }, [O_TOS] = { "tos", NULL },
        [O_TTL] = { "ttl", NULL }, [O_DF] = { "df_default", NULL },
        [O_CSUM] = { "csum", NULL }, [O_EXTS] = { "exts", NULL },
    };
    uint64_t max_key = kind == FDP__TNL_GRE ? UINT32_MAX : 0xffffff;
    uint64_t v;
    int error;

    memset(cfg, 0, sizeof *cfg);
    cfg->kind = kind;
    cfg->ttl = DEFAULT_TTL;
    cfg->df = true;
    cfg->dst_port = kind == FDP__TNL_VXLAN ? VXLAN_PORT
                    : kind == FDP__TNL_GENEVE ? GENEVE_PORT : 0;
    error = fdp__port_parse_args(type, args, o, N_OPTS, errorp);
    /* GRE has no UDP port; only VXLAN has extensions. */
    if (!error && kind == FDP__TNL_GRE && o[O_DST_PORT].value) {
        *errorp = fdp__xasprintf("%s: unknown option \"dst_port\" (GRE has "
                                 "no UDP port)", type);
        error = EINVAL;
    }
    if (!error && kind != FDP__TNL_VXLAN && o[O_EXTS].value) {
        *errorp = fdp__xasprintf("%s: unknown option \"exts\" (VXLAN's "
                                 "only)", type);
        error = EINVAL;
    }
    if (!error && o[O_REMOTE].value) {
        error = parse_ip(type, "remote_ip", o[O_REMOTE].value,
                         &cfg->remote_flow, &cfg->remote, errorp);
    }
    if (!error && o[O_LOCAL].value) {
        error = parse_ip(type, "local_ip", o[O_LOCAL].value, &cfg->local_flow,
                         &cfg->local, errorp);
        cfg->local_set = !cfg->local_flow;
    }
    /* key sets both directions; in_key and out_key override it. */
    const char *in = o[O_IN_KEY].value ? o[O_IN_KEY].value : o[O_KEY].value;
    const char *out = o[O_OUT_KEY].value ? o[O_OUT_KEY].value
                                         : o[O_KEY].value;
    if (!error && in) {
        error = parse_key(type, o[O_IN_KEY].value ? "in_key" : "key", in,
                          max_key, &cfg->in_key, &cfg->in_key_flow, errorp);
    }
    if (!error && out) {
        error = parse_key(type, o[O_OUT_KEY].value ? "out_key" : "key", out,
                          max_key, &cfg->out_key, &cfg->out_key_flow,
                          errorp);
    }
    /* VXLAN and Geneve always carry a VNI; GRE a key only when asked. */
    cfg->out_key_present = kind != FDP__TNL_GRE || out;
    if (!error && o[O_DST_PORT].value) {
        error = parse_uint(type, "dst_port", o[O_DST_PORT].value, 1,
                           UINT16_MAX, &v, errorp);
        cfg->dst_port = (uint16_t) v;
    }
    if (!error && o[O_TOS].value) {
        if (!strcmp(o[O_TOS].value, "inherit")) {
            cfg->tos_inherit = true;
        } else if (!(error = parse_uint(type, "tos", o[O_TOS].value, 0, 0xfc,
                                        &v, errorp)) && (v & 3)) {
            /* Open vSwitch takes the DSCP bits only: ECN is the inner
             * packet's. */
            *errorp = fdp__xasprintf("%s: tos=%s sets ECN bits (the DSCP "
                                     "is the top six)", type,
                                     o[O_TOS].value);
            error = EINVAL;
        } else {
            cfg->tos = (uint8_t) v;
        }
    }
    if (!error && o[O_TTL].value) {
        if (!strcmp(o[O_TTL].value, "inherit")) {
            cfg->ttl_inherit = true;
        } else if (!(error = parse_uint(type, "ttl", o[O_TTL].value, 1, 255,
                                        &v, errorp))) {
            cfg->ttl = (uint8_t) v;
        }
    }
    if (!error && o[O_DF].value) {
        error = parse_bool(type, "df_default", o[O_DF].value, &cfg->df,
                           errorp);
    }
    if (!error && o[O_CSUM].value) {
        error = parse_bool(type, "csum", o[O_CSUM].value, &cfg->csum,
                           errorp);
    }
    if (!error && o[O_EXTS].value) {
        if (strcmp(o[O_EXTS].value, "gbp")) {
            *errorp = fdp__xasprintf("%s: exts=%s: the only extension is "
                                     "gbp", type, o[O_EXTS].value);
            error = EINVAL;
        }
        cfg->gbp = true;
    }
    if (!error) {
        error = check_cfg(type, o, cfg, errorp);
    }
    fdp__port_free_args(o, N_OPTS);
    return error;
}

static void
put_addr(struct fdp__ds *out, const struct in6_addr *a)
{
    char buf[INET6_ADDRSTRLEN];

    if (fdp__tnl_addr_is_ipv4(a)) {
        struct in_addr in = { htonl(fdp__tnl_addr_ipv4(a)) };
        inet_ntop(AF_INET, &in, buf, sizeof buf);
    } else {
        inet_ntop(AF_INET6, a, buf, sizeof buf);
    }
    fdp__ds_printf(out, "\"%s\"", buf);
}

static void
put_key(struct fdp__ds *out, const char *name, bool flow, uint64_t key,
        bool *first)
{
    fdp__ds_put(out, *first ? "" : ", ");
    *first = false;
    if (flow) {
        fdp__ds_printf(out, "%s=flow", name);
    } else {
        fdp__ds_printf(out, "%s=\"%" PRIu64 "\"", name, key);
    }
}

/* The options sorted by name, as ovs-vsctl prints a map. */
void
fdp__tnl_cfg_format(const struct fdp__tnl_cfg *c, struct fdp__ds *out)
{
    bool first = true;
    uint16_t def_port = c->kind == FDP__TNL_VXLAN ? VXLAN_PORT
                        : c->kind == FDP__TNL_GENEVE ? GENEVE_PORT : 0;
    /* One "key" when both directions agree (and say something), else
     * in_key and out_key apart. */
    bool key_one = c->in_key_flow == c->out_key_flow
                   && c->in_key == c->out_key;
    bool key_shown = c->in_key_flow || c->in_key
                     || (c->kind == FDP__TNL_GRE && c->out_key_present);

#define SEP() (fdp__ds_put(out, first ? "" : ", "), first = false)
    fdp__ds_putc(out, '{');
    if (c->csum) {
        SEP();
        fdp__ds_put(out, "csum=\"true\"");
    }
    if (!c->df) {
        SEP();
        fdp__ds_put(out, "df_default=\"false\"");
    }
    if (c->dst_port != def_port) {
        SEP();
        fdp__ds_printf(out, "dst_port=\"%u\"", c->dst_port);
    }
    if (c->gbp) {
        SEP();
        fdp__ds_put(out, "exts=\"gbp\"");
    }
    if (!key_one) {
        put_key(out, "in_key", c->in_key_flow, c->in_key, &first);
    } else if (key_shown) {
        put_key(out, "key", c->in_key_flow, c->in_key, &first);
    }
    if (c->local_flow || c->local_set) {
        SEP();
        fdp__ds_put(out, "local_ip=");
        if (c->local_flow) {
            fdp__ds_put(out, "flow");
        } else {
            put_addr(out, &c->local);
        }
    }
    if (!key_one) {
        put_key(out, "out_key", c->out_key_flow, c->out_key, &first);
    }
    SEP();
    fdp__ds_put(out, "remote_ip=");
    if (c->remote_flow) {
        fdp__ds_put(out, "flow");
    } else {
        put_addr(out, &c->remote);
    }
    if (c->tos_inherit || c->tos) {
        SEP();
        if (c->tos_inherit) {
            fdp__ds_put(out, "tos=inherit");
        } else {
            fdp__ds_printf(out, "tos=\"%u\"", c->tos);
        }
    }
    if (c->ttl_inherit || c->ttl != DEFAULT_TTL) {
        SEP();
        if (c->ttl_inherit) {
            fdp__ds_put(out, "ttl=inherit");
        } else {
            fdp__ds_printf(out, "ttl=\"%u\"", c->ttl);
        }
    }
#undef SEP
    fdp__ds_putc(out, '}');
}

/* ---------------------------------------------------------------------- */
/* Tunnel metadata in the key.                                             */

/* The key's tunnel fields are words 31 to 40 (include/flowdp/key.h):
 * tun_id; tun_flags, tun_tos, tun_ttl, tun_gbp_id, tun_gbp_flags and the
 * option slots' presence bits, with the family bit; the source; the
 * destination; the option space. */
#define TNL_WORD FDP__TUN_FIRST_WORD
static_assert(FDP__TUN_N_WORDS == 10
              && FDP__TUN_IPV6_WORD == TNL_WORD + 1
              && FDP__TUN_MD_PRESENT_WORD == TNL_WORD + 1
              && FDP__TUN_MD_PRESENT_SHIFT == 0
              && FDP__WORD_TUN_IPV6_SRC == TNL_WORD + 2
              && FDP__WORD_TUN_IPV6_DST == TNL_WORD + 4
              && FDP__TUN_MD_WORD == TNL_WORD + 6
              && FDP__WORD_TUN_FLAGS == TNL_WORD + 1
              && FDP__SHIFT_TUN_FLAGS == 48 && FDP__SHIFT_TUN_TOS == 40
              && FDP__SHIFT_TUN_TTL == 32 && FDP__SHIFT_TUN_GBP_ID == 16
              && FDP__SHIFT_TUN_GBP_FLAGS == 8,
              "the tunnel words as key.h lays them out");

void
fdp__tnl_md_from_key(const struct fdp_key *key, struct fdp__tnl_md *md)
{
    const uint64_t *w = &key->w[TNL_WORD];

    memset(md, 0, sizeof *md);
    md->id = w[0];
    md->flags = (uint16_t) ((w[1] >> 48) & FDP__TNL_F_OAM);
    md->tos = (uint8_t) (w[1] >> 40);
    md->ttl = (uint8_t) (w[1] >> 32);
    md->gbp_id = (uint16_t) (w[1] >> 16);
    md->gbp_flags = (uint8_t) (w[1] >> 8);
    md->present = (uint8_t) w[1];
    if (!(w[1] & FDP__TUN_IPV6_BIT)) {
        /* IPv4 (the family bit, bit 63 of word 32, clear): tun_src and
         * tun_dst are the top halves of words 33 and 35 (the IPv6
         * fields' high words). */
        fdp__tnl_addr_from_ipv4(&md->src, (uint32_t) (w[2] >> 32));
        fdp__tnl_addr_from_ipv4(&md->dst, (uint32_t) (w[4] >> 32));
    } else {
        fdp__put32(md->src.s6_addr, (uint32_t) (w[2] >> 32));
        fdp__put32(md->src.s6_addr + 4, (uint32_t) w[2]);
        fdp__put32(md->src.s6_addr + 8, (uint32_t) (w[3] >> 32));
        fdp__put32(md->src.s6_addr + 12, (uint32_t) w[3]);
        fdp__put32(md->dst.s6_addr, (uint32_t) (w[4] >> 32));
        fdp__put32(md->dst.s6_addr + 4, (uint32_t) w[4]);
        fdp__put32(md->dst.s6_addr + 8, (uint32_t) (w[5] >> 32));
        fdp__put32(md->dst.s6_addr + 12, (uint32_t) w[5]);
    }
    for (int i = 0; i < 4; i++) {
        for (int b = 0; b < 8; b++) {
            md->space[i * 8 + b] = (uint8_t) (w[6 + i] >> (56 - 8 * b));
        }
    }
}

static void
addr_to_words(const struct in6_addr *a, uint64_t *hi, uint64_t *lo)
{
    if (fdp__tnl_addr_is_ipv4(a)) {
        *hi = (uint64_t) fdp__tnl_addr_ipv4(a) << 32;
        *lo = 0;
    } else {
        *hi = (uint64_t) fdp__get32(a->s6_addr) << 32
              | fdp__get32(a->s6_addr + 4);
        *lo = (uint64_t) fdp__get32(a->s6_addr + 8) << 32
              | fdp__get32(a->s6_addr + 12);
    }
}

void
fdp__tnl_md_to_key(const struct fdp__tnl_md *md, struct fdp_key *key)
{
    uint64_t *w = &key->w[TNL_WORD];

    w[0] = md->id;
    w[1] = (fdp__tnl_addr_is_ipv4(&md->dst) ? 0 : FDP__TUN_IPV6_BIT)
           | (uint64_t) (md->flags & FDP__TNL_F_OAM) << 48
           | (uint64_t) md->tos << 40 | (uint64_t) md->ttl << 32
           | (uint64_t) md->gbp_id << 16 | (uint64_t) md->gbp_flags << 8
           | md->present;
    addr_to_words(&md->src, &w[2], &w[3]);
    addr_to_words(&md->dst, &w[4], &w[5]);
    for (int i = 0; i < 4; i++) {
        uint64_t v = 0;
        for (int b = 0; b < 8; b++) {
            v = v << 8 | md->space[i * 8 + b];
        }
        w[6 + i] = v;
    }
}

/* The TLV map of Geneve options (add-tlv-map), as it is now, into 'm'
 * (whose 'tlvs' point into 'buf'): the pipeline's map, or none for a
 * bare table.  A pmd reads the map without a lock, in its RCU read-side
 * section (lib/tlv-map.h); a control thread (a trace) takes one. */
static const struct fdp__tnl_tlv_map *
tlv_map(const struct fdp_dp *dp, struct fdp__tnl_tlv_map *m,
        struct fdp__tnl_tlv buf[FDP__TNL_SLOTS])
{
    struct fdp_pipeline *p = fdp__dp_pipeline(dp);
    struct fdp__tlv_opt_info opts[FDP__TUN_MD_SLOTS];

    static_assert(FDP__TUN_MD_SLOTS == FDP__TNL_SLOTS
                  && FDP__TUN_MD_BYTES == FDP__TNL_SPACE,
                  "one option space");
    m->n = 0;
    m->tlvs = buf;
    if (!p) {
        return m;
    }
    fdp__rcu_read_lock();
    size_t n = fdp__tlv_map_options(fdp_pipeline_tlv_map(p), opts);
    fdp__rcu_read_unlock();
    for (size_t i = 0; i < n; i++) {
        buf[i] = (struct fdp__tnl_tlv) {
            .opt_class = opts[i].opt_class, .type = opts[i].type,
            .len = opts[i].len, .ofs = opts[i].offset,
            .index = opts[i].index,
        };
    }
    m->n = (uint32_t) n;
    return m;
}

/* ---------------------------------------------------------------------- */
/* The port class.                                                         */

static int
tnl_open(enum fdp__tnl_kind kind, struct fdp_dp *dp, const char *args,
         struct fdp__port **portp, char **errorp)
{
    struct tnl_port *tp = calloc(1, sizeof *tp);

    (void) dp;
    if (!tp) {
        return ENOMEM;
    }
    int error = fdp__tnl_cfg_parse(kind, args, &tp->cfg, errorp);
    if (error) {
        free(tp);
        return error;
    }
    tp->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
    *portp = &tp->up;
    return 0;
}

static int
vxlan_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
           char **errorp)
{
    return tnl_open(FDP__TNL_VXLAN, dp, args, portp, errorp);
}

static int
geneve_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
            char **errorp)
{
    return tnl_open(FDP__TNL_GENEVE, dp, args, portp, errorp);
}

static int
gre_open(struct fdp_dp *dp, const char *args, struct fdp__port **portp,
         char **errorp)
{
    return tnl_open(FDP__TNL_GRE, dp, args, portp, errorp);
}

static void
tnl_close(struct fdp__port *port)
{
    free(tnl_port_cast(port));
}

static void
tnl_describe(const struct fdp__port *port, char *buf, size_t size)
{
    const struct tnl_port *tp = tnl_port_cast(port);
    struct fdp__ds ds = FDP__DS_INIT;
    struct fdp__tnl_stats s;

    fdp__tnl_port_stats(port, &s);
    fdp__ds_printf(&ds, "%s ", kind_name(tp->cfg.kind));
    fdp__tnl_cfg_format(&tp->cfg, &ds);
    fdp__ds_printf(&ds, "; encap %" PRIu64 ", decap %" PRIu64, s.n_encap,
                   s.n_decap);
    for (int i = 0; i < FDP__TNL_N_DROPS; i++) {
        if (s.drops[i]) {
            fdp__ds_printf(&ds, ", drop %s %" PRIu64,
                           fdp__tnl_drop_name((enum fdp__tnl_drop) i),
                           s.drops[i]);
        }
    }
    snprintf(buf, size, "%s", ds.s ? ds.s : "");
    fdp__ds_destroy(&ds);
}

/* A tunnel port receives nothing of its own (its packets come from
 * decapsulation on the underlay's ports, so it is at its end at once, and
 * a datapath of capture files is done when they are) and transmits
 * through 'encap'. */
#define TNL_CLASS(KIND, OPEN)                                           \
    {                                                                   \
        .type = KIND, .open = OPEN, .close = tnl_close,                 \
        .rx = fdp__port_rx_none, .tx = fdp__port_tx_drop,               \
        .describe = tnl_describe, .encap = fdp__tnl_send,               \
    }

const struct fdp__port_class fdp__vxlan_port_class =
    TNL_CLASS("vxlan", vxlan_open);
const struct fdp__port_class fdp__geneve_port_class =
    TNL_CLASS("geneve", geneve_open);
const struct fdp__port_class fdp__gre_port_class =
    TNL_CLASS("gre", gre_open);

static bool
is_tunnel(const struct fdp__port *port)
{
    return port->class->encap == fdp__tnl_send;
}

bool
fdp__tnl_port_stats(const struct fdp__port *port,
                    struct fdp__tnl_stats *stats)
{
    if (!is_tunnel(port)) {
        return false;
    }
    const struct fdp__tnl_stats *s = &tnl_port_cast(port)->stats;
    stats->n_encap = fdp__read_count(&s->n_encap);
    stats->n_decap = fdp__read_count(&s->n_decap);
    for (int i = 0; i < FDP__TNL_N_DROPS; i++) {
        stats->drops[i] = fdp__read_count(&s->drops[i]);
    }
    return true;
}

static void
count_drop(struct tnl_port *tp, enum fdp__tnl_drop reason)
{
    fdp__count(&tp->stats.drops[reason], 1);
}

/* ---------------------------------------------------------------------- */
/* Receive.                                                                */

/* Where tunnel packets arrive: a protocol and UDP port, and the tunnel
 * ports behind it. */
struct endpoint {
    enum fdp__tnl_kind kind;
    uint16_t dst_port;          /* 0 for GRE. */
    uint32_t first, n;          /* Its ports: ports[first..first+n). */
};


struct fdp__tnl_rx_set {
    uint32_t n_endpoints;
    bool gre;                   /* An endpoint is GRE's. */
    uint16_t udp_ports[FDP__TNL_MAX_ENDPOINTS];  /* Per endpoint, 0 for GRE. */
    struct endpoint endpoints[FDP__TNL_MAX_ENDPOINTS];
    uint32_t n_ports;
    struct tnl_port *ports[];
};

static int
endpoint_of(struct fdp__tnl_rx_set *set, const struct tnl_port *tp)
{
    for (uint32_t e = 0; e < set->n_endpoints; e++) {
        if (set->endpoints[e].kind == tp->cfg.kind
            && set->endpoints[e].dst_port == tp->cfg.dst_port) {
            return (int) e;
        }
    }
    return -1;
}

int
fdp__tnl_rx_set_create(struct fdp__port *const *ports, size_t n,
                       struct fdp__tnl_rx_set **setp, char **errorp)
{
    size_t n_tnl = 0;

    *setp = NULL;
    for (size_t i = 0; i < n; i++) {
        n_tnl += is_tunnel(ports[i]);
    }
    if (!n_tnl) {
        return 0;
    }
    struct fdp__tnl_rx_set *set = calloc(1, sizeof *set
                                            + n_tnl * sizeof *set->ports);
    if (!set) {
        return ENOMEM;
    }
    /* Endpoints in order of first appearance, their ports together. */
    struct tnl_port **tmp = calloc(n_tnl, sizeof *tmp);
    size_t k = 0;
    if (!tmp) {
        free(set);
        return ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (is_tunnel(ports[i])) {
            tmp[k++] = tnl_port_cast(ports[i]);
        }
    }
    int error = 0;
    for (size_t i = 0; i < n_tnl && !error; i++) {
        const struct fdp__tnl_cfg *c = &tmp[i]->cfg;
        int e = endpoint_of(set, tmp[i]);
        if (e >= 0) {
            /* As Open vSwitch: one UDP port is VXLAN with GBP or
             * without. */
            if (c->gbp != set->ports[set->endpoints[e].first]->cfg.gbp) {
                *errorp = fdp__xasprintf("port %" PRIu32 ": VXLAN with and "
                                         "without exts=gbp on one UDP port "
                                         "(%u)", tmp[i]->up.port_no,
                                         c->dst_port);
                error = EEXIST;
            }
            continue;
        }
        for (uint32_t f = 0; f < set->n_endpoints; f++) {
            if (c->kind != FDP__TNL_GRE && set->udp_ports[f] == c->dst_port
                && set->endpoints[f].kind != FDP__TNL_GRE) {
                *errorp = fdp__xasprintf("port %" PRIu32 ": UDP port %u is "
                                         "%s's already", tmp[i]->up.port_no,
                                         c->dst_port,
                                         kind_name(set->endpoints[f].kind));
                error = EEXIST;
            }
        }
        if (!error && set->n_endpoints == FDP__TNL_MAX_ENDPOINTS) {
            *errorp = fdp__xasprintf("port %" PRIu32 ": more tunnel "
                                     "endpoints (kind and UDP port) than "
                                     "the %d a datapath has",
                                     tmp[i]->up.port_no,
                                     FDP__TNL_MAX_ENDPOINTS);
            error = ENOSPC;
        }
        if (error) {
            break;
        }
        struct endpoint *ep = &set->endpoints[set->n_endpoints];
        ep->kind = c->kind;
        ep->dst_port = c->dst_port;
        ep->first = set->n_ports;
        for (size_t j = i; j < n_tnl; j++) {
            if (tmp[j]->cfg.kind == ep->kind
                && tmp[j]->cfg.dst_port == ep->dst_port) {
                set->ports[set->n_ports++] = tmp[j];
                ep->n++;
            }
        }
        set->udp_ports[set->n_endpoints] = ep->dst_port;
        set->gre |= ep->kind == FDP__TNL_GRE;
        set->n_endpoints++;
    }
    free(tmp);
    if (error) {
        free(set);
        return error;
    }
    *setp = set;
    return 0;
}

void
fdp__tnl_rx_set_destroy(struct fdp__tnl_rx_set *set)
{
    free(set);
}

#define IPPROTO_UDP_ 17
#define IPPROTO_GRE_ 47

static inline uint64_t
key_field(const struct fdp_key *key, unsigned int word, unsigned int shift,
          uint64_t mask)
{
    return (key->w[word] & mask) >> shift;
}

#define KEY_FIELD(KEY, ID) \
    key_field(KEY, FDP__WORD_##ID, FDP__SHIFT_##ID, FDP__MASK(ID))

/* The endpoint of 'set' a packet with 'key' is for, or -1. */
static inline int
rx_endpoint(const struct fdp__tnl_rx_set *set, const struct fdp_key *key)
{
    uint64_t type = KEY_FIELD(key, DL_TYPE);
    if (type != 0x0800 && type != 0x86dd) {
        return -1;
    }
    uint64_t proto = KEY_FIELD(key, NW_PROTO);
    if (proto == IPPROTO_UDP_) {
        uint64_t port = KEY_FIELD(key, TP_DST);
        for (uint32_t e = 0; e < set->n_endpoints; e++) {
            if (set->udp_ports[e] == port
                && set->endpoints[e].kind != FDP__TNL_GRE) {
                return (int) e;
            }
        }
    } else if (proto == IPPROTO_GRE_ && set->gre) {
        for (uint32_t e = 0; e < set->n_endpoints; e++) {
            if (set->endpoints[e].kind == FDP__TNL_GRE) {
                return (int) e;
            }
        }
    }
    return -1;
}

bool
fdp__tnl_rx_candidate(const struct fdp__tnl_rx_set *set,
                      const struct fdp_key *key)
{
    return set && rx_endpoint(set, key) >= 0;
}

/* How specifically port 'tp' takes a packet with metadata 'md' (higher
 * is more specific), or -1 if it does not: Open vSwitch's tnl_find()
 * order (see "Receive" above). */
static int
rx_score(const struct tnl_port *tp, const struct fdp__tnl_md *md)
{
    const struct fdp__tnl_cfg *c = &tp->cfg;
    int score = 0;

    if (!c->in_key_flow) {
        if (md->id != c->in_key) {
            return -1;
        }
        score += 8;
    }
    if (!c->remote_flow) {
        if (memcmp(&md->src, &c->remote, sizeof md->src)) {
            return -1;
        }
        score += 4;
    }
    if (c->local_set) {
        if (memcmp(&md->dst, &c->local, sizeof md->dst)) {
            return -1;
        }
        score += 2;
    } else if (!c->local_flow) {
        score += 1;
    }
    return score;
}

/* RFC 6040 decapsulation, as Open vSwitch's tnl_process_ecn(): an outer
 * header marked CE (congestion experienced) marks the inner IP packet CE
 * too, in its bytes and its key; an inner IP packet that is not ECN
 * capable cannot carry the mark and is dropped (returns false). */
static bool
decap_ecn(struct fdp__pkt *pkt, uint32_t basis, uint32_t *hash)
{
    uint64_t type = KEY_FIELD(&pkt->key, DL_TYPE);
    if ((type != 0x0800 && type != 0x86dd) || pkt->layout.l3 < 0) {
        return true;
    }
    uint8_t *ip = pkt->data + pkt->layout.l3;
    uint8_t ecn = (uint8_t) KEY_FIELD(&pkt->key, NW_ECN);
    if (ecn == 0) {
        return false;
    }
    if (ecn == 3) {
        return true;
    }
    if (type == 0x0800) {
        /* The word at offset 0 (version, IHL, TOS) changes: RFC 1624's
         * HC' = ~(~HC + ~m + m'). */
        uint16_t old = fdp__get16(ip);
        uint16_t new = (uint16_t) (old | 3);
        uint32_t sum = (uint16_t) ~fdp__get16(ip + 10)
                       + (uint16_t) ~old + new;
        sum = (sum & 0xffff) + (sum >> 16);
        sum = (sum & 0xffff) + (sum >> 16);
        fdp__put16(ip, new);
        fdp__put16(ip + 10, (uint16_t) ~sum);
    } else {
        ip[1] |= 0x30;          /* The traffic class's low two bits. */
    }
    pkt->key.w[FDP__WORD_NW_ECN] |= FDP__MASK(NW_ECN);
    *hash = fdp_hash_fast(pkt->key.w, FDP_KEY_PACKET_WORDS, basis);
    return true;
}

enum fdp__tnl_rx
fdp__tnl_receive(struct fdp_dp *dp, const struct fdp__tnl_rx_set *set,
                 struct fdp__pkt *pkt, uint32_t basis, uint32_t *hash,
                 struct fdp__port **portp)
{
    int e = rx_endpoint(set, &pkt->key);
    if (e < 0 || pkt->layout.l3 < 0) {
        return FDP__TNL_RX_NOT;
    }
    const struct endpoint *ep = &set->endpoints[e];

    /* For us?  The destination as the key has it. */
    struct in6_addr dst;
    if (KEY_FIELD(&pkt->key, DL_TYPE) == 0x0800) {
        fdp__tnl_addr_from_ipv4(&dst, (uint32_t) KEY_FIELD(&pkt->key,
                                                           NW_DST));
    } else {
        fdp_u128 v = fdp__key_get(&pkt->key, FDP_F_IPV6_DST);
        for (int i = 15; i >= 0; i--, v >>= 8) {
            dst.s6_addr[i] = (uint8_t) v;
        }
    }
    if (!fdp__underlay_is_local(dp, &dst)) {
        return FDP__TNL_RX_NOT;
    }

    /* Pop (the checks), then the port. */
    struct tnl_port *first = set->ports[ep->first];
    struct fdp__tnl_md md;
    uint32_t inner_ofs, inner_size;
    enum fdp__tnl_drop reason;
    struct fdp__tnl_tlv_map map = { 0, NULL };
    struct fdp__tnl_tlv tlvs[FDP__TNL_SLOTS];
    if (ep->kind == FDP__TNL_GENEVE) {
        tlv_map(dp, &map, tlvs);
    }
    if (!fdp__tnl_pop(pkt->data, pkt->size, (uint32_t) pkt->layout.l3,
                      ep->kind, first->cfg.gbp, &map, &md, &inner_ofs,
                      &inner_size, &reason)) {
        count_drop(first, reason);
        return FDP__TNL_RX_DROP;
    }
    struct tnl_port *best = NULL;
    int best_score = -1;
    for (uint32_t i = ep->first; i < ep->first + ep->n; i++) {
        int score = rx_score(set->ports[i], &md);
        if (score > best_score) {
            best = set->ports[i];
            best_score = score;
        }
    }
    if (!best) {
        count_drop(first, FDP__TNL_DROP_NO_PORT);
        return FDP__TNL_RX_DROP;
    }

    /* In place: the frame's data start moves forward. */
    pkt->data += inner_ofs;
    pkt->headroom += inner_ofs;
    pkt->size = inner_size;
    *hash = fdp__packet_extract_hash(pkt->data, pkt->size, best->up.port_no,
                                     basis, &pkt->key, &pkt->layout);
    if ((md.tos & 3) == 3 && !decap_ecn(pkt, basis, hash)) {
        count_drop(best, FDP__TNL_DROP_ECN);
        return FDP__TNL_RX_DROP;
    }
    fdp__tnl_md_to_key(&md, &pkt->key);
    fdp__count(&best->stats.n_decap, 1);
    *portp = &best->up;
    return FDP__TNL_RX_DECAP;
}

/* ---------------------------------------------------------------------- */
/* Send.                                                                   */

/* The header cache: HDR_ENTRIES entries, direct mapped, per pmd.  A
 * datapath sends to a few remote endpoints per tunnel (one per host of
 * the overlay, and a flow-based port's key says which), so a small table
 * holds them; a collision only costs a rebuild. */
#define HDR_SHIFT 8
#define HDR_ENTRIES (1u << HDR_SHIFT)

struct hdr_entry {
    uint64_t gen;               /* The port's generation; 0: empty. */
    uint64_t version;           /* The underlay's, when built. */
    struct fdp__tnl_md md;      /* What the header was built from... */
    uint32_t n_tlvs;            /* ...with the TLV map's options (Geneve */
    struct fdp__tnl_tlv tlvs[FDP__TNL_SLOTS];   /* only) then. */
    uint32_t out_port;          /* The underlay port. */
    struct fdp__tnl_hdr hdr;
};

struct fdp__tnl_pmd {
    struct hdr_entry entries[HDR_ENTRIES];
};

struct fdp__tnl_pmd *
fdp__tnl_pmd_create(void)
{
    return calloc(1, sizeof(struct fdp__tnl_pmd));
}

void
fdp__tnl_pmd_destroy(struct fdp__tnl_pmd *tnl)
{
    free(tnl);
}

/* The inner packet's IP TOS and TTL (hop limit) from its bytes, as the
 * actions before the output left them; false if it is not IP. */
static bool
inner_ip(const struct fdp__pkt *pkt, uint8_t *tos, uint8_t *ttl)
{
    if (pkt->layout.l3 < 0) {
        return false;
    }
    uint64_t type = KEY_FIELD(&pkt->key, DL_TYPE);
    const uint8_t *ip = pkt->data + pkt->layout.l3;
    uint32_t room = pkt->size - (uint32_t) pkt->layout.l3;
    if (type == 0x0800 && room >= 20) {
        *tos = ip[1];
        *ttl = ip[8];
        return true;
    }
    if (type == 0x86dd && room >= 40) {
        *tos = (uint8_t) (fdp__get16(ip) >> 4);
        *ttl = ip[7];
        return true;
    }
    return false;
}

/* Step 1 of "Send": the metadata the header is built from, for a packet
 * whose key is 'key' and which is IP with 'tos' and 'ttl' if 'ip'. */
static bool
send_md(const struct tnl_port *tp, const struct fdp_key *key, bool ip,
        uint8_t tos, uint8_t ttl, struct fdp__tnl_md *md,
        enum fdp__tnl_drop *reason)
{
    const struct fdp__tnl_cfg *c = &tp->cfg;
    struct fdp__tnl_md flow;

    fdp__tnl_md_from_key(key, &flow);
    memset(md, 0, sizeof *md);
    md->dst = c->remote_flow ? flow.dst : c->remote;
    if (addr_is_any(&md->dst)) {
        *reason = FDP__TNL_DROP_NO_DST;
        return false;
    }
    if (c->local_flow) {
        md->src = flow.src;
    } else if (c->local_set) {
        md->src = c->local;
    }
    md->id = c->out_key_flow ? flow.id : c->out_key;
    md->ttl = c->ttl_inherit && ip ? ttl : c->ttl;
    md->tos = c->tos_inherit && ip ? (tos & 0xfc) : c->tos;
    if (ip) {
        /* ECN is always carried out; CE as ECT(0) (RFC 6040's normal
         * mode, as Open vSwitch's tnl_port_send()). */
        md->tos |= (tos & 3) == 3 ? 2 : (tos & 3);
    }
    md->flags = (uint16_t) ((flow.flags & FDP__TNL_F_OAM)
                            | (c->df ? FDP__TNL_F_DF : 0)
                            | (c->csum ? FDP__TNL_F_CSUM : 0)
                            | (c->out_key_present ? FDP__TNL_F_KEY : 0));
    /* Only what the header carries, so that the cache keys on nothing
     * else. */
    if (c->gbp) {
        md->gbp_id = flow.gbp_id;
        md->gbp_flags = flow.gbp_flags;
    }
    if (c->kind == FDP__TNL_GENEVE) {
        md->present = flow.present;
        memcpy(md->space, flow.space, sizeof md->space);
    } else {
        md->flags &= (uint16_t) ~FDP__TNL_F_OAM;
    }
    return true;
}

static uint32_t
md_hash(uint64_t gen, const struct fdp__tnl_md *md)
{
    uint64_t w[1 + (sizeof *md + 7) / 8];

    memset(w, 0, sizeof w);
    w[0] = gen;
    memcpy(&w[1], md, sizeof *md);
    return fdp_hash_jhash2(w, FDP_ARRAY_SIZE(w), 0);
}

/* Step 2: the header, built now if the cache does not have it current
 * (for 'md', the TLV map 'map' and the underlay's version). */
static const struct hdr_entry *
send_header(struct tnl_port *tp, struct fdp__tnl_pmd *tnl,
            const struct fdp__tnl_md *md, const struct fdp__tnl_tlv_map *map,
            enum fdp__tnl_drop *reason)
{
    struct fdp_dp *dp = tp->up.dp;
    uint64_t version = fdp__underlay_version(dp);
    struct hdr_entry *e = &tnl->entries[md_hash(tp->gen, md)
                                        & (HDR_ENTRIES - 1)];

    if (e->gen == tp->gen && e->version == version
        && !memcmp(&e->md, md, sizeof *md) && e->n_tlvs == map->n
        && (!map->n
            || !memcmp(e->tlvs, map->tlvs, map->n * sizeof *map->tlvs))) {
        return e;
    }
    struct fdp__nexthop nh;
    int error = fdp__underlay_resolve(dp, &md->dst,
                                      addr_is_any(&md->src) ? NULL
                                                            : &md->src,
                                      &nh);
    if (error) {
        *reason = error == EAGAIN ? FDP__TNL_DROP_NO_NEIGH
                                  : FDP__TNL_DROP_NO_ROUTE;
        return NULL;
    }
    struct fdp__tnl_md built = *md;
    if (addr_is_any(&built.src)) {
        built.src = nh.src;
    }
    struct fdp__tnl_build_params p = {
        .kind = tp->cfg.kind, .md = &built, .dst_port = tp->cfg.dst_port,
        .gbp = tp->cfg.gbp, .eth_src = nh.src_mac, .eth_dst = nh.dst_mac,
        .map = map,
    };
    if (fdp__tnl_build(&p, &e->hdr)) {
        /* The route's source is of another family than the destination:
         * no usable route. */
        e->gen = 0;
        *reason = FDP__TNL_DROP_NO_ROUTE;
        return NULL;
    }
    e->gen = tp->gen;
    e->version = version;
    e->md = *md;
    e->n_tlvs = map->n;
    if (map->n) {
        memcpy(e->tlvs, map->tlvs, map->n * sizeof *map->tlvs);
    }
    e->out_port = nh.port_no;
    return e;
}

bool
fdp__tnl_send(struct fdp__port *port, struct fdp__tnl_pmd **tnlp,
              struct fdp__pkt *pkt, uint32_t frame_size, uint32_t hash,
              uint32_t *out_port)
{
    struct tnl_port *tp = tnl_port_cast(port);
    enum fdp__tnl_drop reason;
    struct fdp__tnl_md md;
    uint8_t tos = 0, ttl = 0;
    bool ip = inner_ip(pkt, &tos, &ttl);

    if (!*tnlp && !(*tnlp = fdp__tnl_pmd_create())) {
        count_drop(tp, FDP__TNL_DROP_NO_ROOM);
        return false;
    }
    if (!send_md(tp, &pkt->key, ip, tos, ttl, &md, &reason)) {
        count_drop(tp, reason);
        return false;
    }
    struct fdp__tnl_tlv_map map = { 0, NULL };
    struct fdp__tnl_tlv tlvs[FDP__TNL_SLOTS];
    if (tp->cfg.kind == FDP__TNL_GENEVE) {
        tlv_map(port->dp, &map, tlvs);
    }
    const struct hdr_entry *e = send_header(tp, *tnlp, &md, &map, &reason);
    if (!e) {
        count_drop(tp, reason);
        return false;
    }

    /* Step 3: room in front, then the push. */
    uint32_t need = e->hdr.len;
    if (pkt->headroom < need) {
        uint32_t tail = frame_size - FDP__FRAME_META_SIZE - pkt->headroom
                        - pkt->size;
        uint32_t shift = need - pkt->headroom;
        if (tail < shift) {
            count_drop(tp, FDP__TNL_DROP_NO_ROOM);
            return false;
        }
        memmove(pkt->data + shift, pkt->data, pkt->size);
        pkt->data += shift;
        pkt->headroom += shift;
    }
    pkt->data = fdp__tnl_push(&e->hdr, pkt->data, pkt->size,
                              fdp__tnl_src_port(hash));
    pkt->size += need;
    pkt->headroom -= need;
    pkt->layout = (struct fdp_packet_layout) {
        .l2 = 0, .l2_5 = -1, .l3 = 14, .l4 = e->hdr.l4_ofs,
    };
    fdp__count(&tp->stats.n_encap, 1);
    *out_port = e->out_port;
    return true;
}

/* The explanation of fdp_dp_tunnel_explain(), into 'out'. */
static bool
tnl_trace(struct fdp__port *port, const struct fdp_key *key,
          struct fdp__ds *out)
{
    struct tnl_port *tp = tnl_port_cast(port);
    enum fdp__tnl_drop reason;
    struct fdp__tnl_md md;
    struct fdp__nexthop nh;
    uint64_t type = KEY_FIELD(key, DL_TYPE);
    bool ip = type == 0x0800 || type == 0x86dd;
    /* The tos byte is nw_tos and nw_ecn together (key.h, word 1). */
    uint8_t tos = (uint8_t) key->w[FDP__WORD_NW_ECN];
    uint8_t ttl = (uint8_t) KEY_FIELD(key, NW_TTL);

    fdp__ds_printf(out, "native tunnel push to %s port %" PRIu32 ": ",
                   kind_name(tp->cfg.kind), port->port_no);
    if (!send_md(tp, key, ip, tos, ttl, &md, &reason)) {
        fdp__ds_printf(out, "dropped (%s)", fdp__tnl_drop_name(reason));
        return false;
    }
    int error = fdp__underlay_resolve(port->dp, &md.dst,
                                      addr_is_any(&md.src) ? NULL : &md.src,
                                      &nh);
    if (error) {
        fdp__ds_put(out, "dst=");
        put_addr(out, &md.dst);
        fdp__ds_printf(out, " dropped (%s)",
                       fdp__tnl_drop_name(error == EAGAIN
                                          ? FDP__TNL_DROP_NO_NEIGH
                                          : FDP__TNL_DROP_NO_ROUTE));
        return false;
    }
    if (addr_is_any(&md.src)) {
        md.src = nh.src;
    }
    fdp__ds_printf(out, "eth(src=%02x:%02x:%02x:%02x:%02x:%02x,"
                   "dst=%02x:%02x:%02x:%02x:%02x:%02x),",
                   (unsigned int) (nh.src_mac >> 40) & 0xff,
                   (unsigned int) (nh.src_mac >> 32) & 0xff,
                   (unsigned int) (nh.src_mac >> 24) & 0xff,
                   (unsigned int) (nh.src_mac >> 16) & 0xff,
                   (unsigned int) (nh.src_mac >> 8) & 0xff,
                   (unsigned int) nh.src_mac & 0xff,
                   (unsigned int) (nh.dst_mac >> 40) & 0xff,
                   (unsigned int) (nh.dst_mac >> 32) & 0xff,
                   (unsigned int) (nh.dst_mac >> 24) & 0xff,
                   (unsigned int) (nh.dst_mac >> 16) & 0xff,
                   (unsigned int) (nh.dst_mac >> 8) & 0xff,
                   (unsigned int) nh.dst_mac & 0xff);
    bool v4 = fdp__tnl_addr_is_ipv4(&md.dst);
    fdp__ds_put(out, v4 ? "ipv4(src=" : "ipv6(src=");
    put_addr(out, &md.src);
    fdp__ds_put(out, ",dst=");
    put_addr(out, &md.dst);
    fdp__ds_printf(out, ",proto=%u,tos=%#x,ttl=%u%s),",
                   tp->cfg.kind == FDP__TNL_GRE ? 47 : 17, md.tos, md.ttl,
                   v4 && (md.flags & FDP__TNL_F_DF) ? ",frag=DF" : "");
    if (tp->cfg.kind == FDP__TNL_GRE) {
        fdp__ds_printf(out, "gre((flags=%#x,proto=0x6558)",
                       (md.flags & FDP__TNL_F_CSUM ? 0x8000 : 0)
                       | (md.flags & FDP__TNL_F_KEY ? 0x2000 : 0));
        if (md.flags & FDP__TNL_F_KEY) {
            fdp__ds_printf(out, ",key=%#" PRIx64, md.id & 0xffffffff);
        }
        fdp__ds_put(out, ")");
    } else {
        fdp__ds_printf(out, "udp(src=0,dst=%u,csum=%s),",
                       tp->cfg.dst_port,
                       !v4 || (md.flags & FDP__TNL_F_CSUM) ? "0xffff" : "0");
        fdp__ds_printf(out, "%s(vni=%#" PRIx64 ")",
                       kind_name(tp->cfg.kind), md.id & 0xffffff);
    }
    fdp__ds_printf(out, " out_port(%" PRIu32 ")", nh.port_no);
    return true;
}

int
fdp_dp_tunnel_explain(struct fdp_dp *dp, uint32_t port_no,
                      const struct fdp_key *key, char *buf, size_t size)
{
    struct fdp__ds ds = FDP__DS_INIT;
    int error = 0;

    fdp__dp_lock(dp);
    struct fdp__port *port = fdp__dp_port_locked(dp, port_no);
    if (!port) {
        error = ENOENT;
    } else if (!is_tunnel(port)) {
        error = EINVAL;
    } else {
        tnl_trace(port, key, &ds);
    }
    fdp__dp_unlock(dp);
    if (!error && size) {
        snprintf(buf, size, "%s", ds.s ? ds.s : "");
    }
    fdp__ds_destroy(&ds);
    return error;
}
