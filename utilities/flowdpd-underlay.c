/*
 * flowdpd's underlay (flowdp/underlay.h): addresses on ports, routes and
 * the neighbour cache that tunnel ports use, as Open vSwitch's
 * ovs-appctl ovs/route/... and tnl/neigh/... commands see theirs.
 *
 * Methods (params -> result; IP is IPv4 or IPv6 text, IP/LEN a prefix):
 *   addr/add     {port:N, addr:"IP/LEN", mac?:"MAC"} -> {}
 *                (mac: the port's underlay MAC, replacing the derived one)
 *   addr/del     {port:N, addr:"IP/LEN"}             -> {}
 *   addr/show    {}                                  -> {text}
 *   route/add    {prefix:"IP/LEN", port:N, gw?:"IP", src?:"IP"} -> {}
 *   route/del    {prefix:"IP/LEN"}                   -> {}
 *   route/show   {}                                  -> {text}
 *   route/lookup {dst:"IP"}                          -> {text}
 *   route/resolve {dst:"IP"}                         -> {text}
 *                (as a tunnel resolves it: port, source, both MACs; an
 *                unknown neighbour fails and is asked for)
 *   neigh/set    {port:N, ip:"IP", mac:"MAC"}        -> {}   (static)
 *   neigh/del    {port:N, ip:"IP"}                   -> {}
 *   neigh/show   {}                                  -> {text}
 *   neigh/flush  {}                                  -> {n}
 *   neigh/config {limit?:N, aging?:N}                -> {limit, aging}
 *   underlay/stats {}                                -> {n_no_route, ...}
 *
 * The changes (addresses, MACs, routes, static neighbours, the cache's
 * limit and aging) are operations like the flows' (flowdpd-flows.c):
 * "addr-add", "addr-del", "route-add", "route-del", "neigh-set",
 * "neigh-del" and "neigh-config", each the method's params with "op".
 * Each is made in the datapath when applied (its errors are the
 * datapath's own, which no check beforehand could foresee), then
 * journalled; if the journal cannot keep it, underlay_undo() puts back
 * what was there before (a snapshot taken first).  Learned neighbours are
 * not kept: the network teaches them again.
 *
 * Replaying a journal on start, an operation that no longer applies (its
 * port was not given this time, say) is skipped with a warning, never
 * fatal: a journal whose tail failed would otherwise be cut there,
 * flows and all.  The journal's snapshot holds the underlay beside the
 * flows ("underlay" in its "add", restored first: underlay_snapshot(),
 * underlay_restore()).
 *
 * --addr=PORT:IP/LEN[,mac=MAC] and --route=PREFIX/LEN,PORT[,GW][,src=IP]
 * (underlay_startup()) apply after the journal and are not journalled:
 * like --port, the command line is the configuration of this run.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

/* ---------------------------------------------------------------------- */
/* Parameters.                                                             */

static int
param_port(const json_t *p, struct op_result *r, uint32_t *port)
{
    const json_t *v = json_object_get(p, "port");

    if (!json_is_integer(v) || json_integer_value(v) < 1
        || json_integer_value(v) > 0xfeff) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"port\": expected a port "
                       "number from 1 to 65279");
    }
    *port = (uint32_t) json_integer_value(v);
    return 0;
}

/* The IP (with "/LEN" if 'plen' is nonnull) of member 'name'; if
 * 'optional', a missing member leaves '*given' false. */
static int
param_ip(const json_t *p, const char *name, bool optional, bool *given,
         struct in6_addr *addr, unsigned int *plen, struct op_result *r)
{
    const json_t *v = json_object_get(p, name);
    char *msg = NULL;

    if (given) {
        *given = v != NULL;
    }
    if (!v && optional) {
        return 0;
    }
    if (!json_is_string(v)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected %s", name,
                       plen ? "an address and prefix length (IP/LEN)"
                            : "an IPv4 or IPv6 address");
    }
    if (fdp_underlay_parse_ip(json_string_value(v), addr, plen, &msg)) {
        op_fail(r, RPC_INVALID_PARAMS, "%s: %s", name,
                msg ? msg : "out of memory");
        free(msg);
        return EINVAL;
    }
    return 0;
}

static int
param_mac(const json_t *p, const char *name, bool optional, bool *given,
          uint8_t mac[6], struct op_result *r)
{
    const json_t *v = json_object_get(p, name);
    char *msg = NULL;

    if (given) {
        *given = v != NULL;
    }
    if (!v && optional) {
        return 0;
    }
    if (!json_is_string(v)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected a MAC "
                       "address", name);
    }
    if (fdp_underlay_parse_mac(json_string_value(v), mac, &msg)) {
        op_fail(r, RPC_INVALID_PARAMS, "%s: %s", name,
                msg ? msg : "out of memory");
        free(msg);
        return EINVAL;
    }
    return 0;
}

static const char *
ip_text(const struct in6_addr *a, char buf[FDP_UNDERLAY_IP_STRLEN])
{
    fdp_underlay_format_ip(a, buf);
    return buf;
}

static void
mac_text(const uint8_t m[6], char buf[18])
{
    snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
             m[3], m[4], m[5]);
}

static const char *
family(const struct in6_addr *a)
{
    return IN6_IS_ADDR_V4MAPPED(a) ? "IPv4" : "IPv6";
}

/* "port N: ..." for the errors every change shares. */
static int
port_error(int error, uint32_t port, struct op_result *r)
{
    switch (error) {
    case ENOENT:
        return op_fail(r, RPC_FAILED, "port %" PRIu32 ": no such port",
                       port);
    case EOPNOTSUPP:
        return op_fail(r, RPC_FAILED, "port %" PRIu32 ": its type carries "
                       "no underlay (only ring, pcap, afpacket and afxdp "
                       "ports do)", port);
    default:
        return op_fail(r, RPC_FAILED, "port %" PRIu32 ": %s", port,
                       strerror(error));
    }
}

/* ---------------------------------------------------------------------- */
/* The changes, one function each: the datapath's call and its errors in
 * words.  Returns 0 or an errno value with 'r' set.                       */

static int
do_addr_add(struct server *s, uint32_t port, const struct in6_addr *a,
            unsigned int plen, const uint8_t *mac, struct op_result *r)
{
    char ip[FDP_UNDERLAY_IP_STRLEN];
    int error;

    if (mac) {
        error = fdp_dp_port_set_mac(s->dp, port, mac);
        if (error == EINVAL) {
            return op_fail(r, RPC_FAILED, "mac: a port's MAC must be "
                           "unicast and not zero");
        }
        if (error) {
            return port_error(error, port, r);
        }
    }
    error = fdp_dp_addr_add(s->dp, port, a, plen);
    switch (error) {
    case 0:
        return 0;
    case EINVAL:
        return op_fail(r, RPC_FAILED, "%s: not an address a port may have "
                       "(unspecified, multicast, loopback or broadcast)",
                       ip_text(a, ip));
    case EEXIST:
        return op_fail(r, RPC_FAILED, "%s: the datapath has this address "
                       "already (addr/show)", ip_text(a, ip));
    case ENOSPC:
        return op_fail(r, RPC_FAILED, "%s: the datapath has the most "
                       "addresses it may have (4096)", ip_text(a, ip));
    case ENOENT:
    case EOPNOTSUPP:
        return port_error(error, port, r);
    default:
        return op_fail(r, RPC_FAILED, "port %" PRIu32 ": reading its "
                       "interface's MAC: %s", port, strerror(error));
    }
}

static int
do_addr_del(struct server *s, uint32_t port, const struct in6_addr *a,
            unsigned int plen, struct op_result *r)
{
    char ip[FDP_UNDERLAY_IP_STRLEN];
    int error = fdp_dp_addr_del(s->dp, port, a, plen);

    if (error == ENOENT) {
        return op_fail(r, RPC_FAILED, "%s/%u: port %" PRIu32 " has no "
                       "such address (addr/show)", ip_text(a, ip), plen,
                       port);
    }
    return error ? op_fail(r, RPC_FAILED, "%s", strerror(error)) : 0;
}

static int
do_route_add(struct server *s, const struct in6_addr *prefix,
             unsigned int plen, uint32_t port, const struct in6_addr *gw,
             const struct in6_addr *src, struct op_result *r)
{
    char p[FDP_UNDERLAY_IP_STRLEN], x[FDP_UNDERLAY_IP_STRLEN];
    int error = fdp_dp_route_add(s->dp, prefix, plen, port, gw, src);

    ip_text(prefix, p);
    switch (error) {
    case 0:
        return 0;
    case EINVAL:
        return op_fail(r, RPC_FAILED, "route %s/%u: gateway %s: not a "
                       "host address", p, plen, gw ? ip_text(gw, x) : "");
    case EAFNOSUPPORT:
        return op_fail(r, RPC_FAILED, "route %s/%u: the gateway and source "
                       "must be %s addresses, as the prefix", p, plen,
                       family(prefix));
    case EADDRNOTAVAIL:
        if (src) {
            return op_fail(r, RPC_FAILED, "route %s/%u: src=%s: not an "
                           "address of port %" PRIu32 " (addr/show)", p,
                           plen, ip_text(src, x), port);
        }
        return op_fail(r, RPC_FAILED, "route %s/%u: port %" PRIu32 " has "
                       "no %s address to send from (addr/add one, or give "
                       "src=)", p, plen, port, family(prefix));
    case ENETUNREACH:
        return op_fail(r, RPC_FAILED, "route %s/%u: gateway %s is not "
                       "straight out of port %" PRIu32 " (no route through "
                       "that port without a gateway covers it)", p, plen,
                       gw ? ip_text(gw, x) : "", port);
    case EEXIST:
        return op_fail(r, RPC_FAILED, "route %s/%u exists already "
                       "(route/show; route/del it first)", p, plen);
    case ENOSPC:
        return op_fail(r, RPC_FAILED, "route %s/%u: the table has the most "
                       "routes it may have (65536)", p, plen);
    default:
        return port_error(error, port, r);
    }
}

static int
do_route_del(struct server *s, const struct in6_addr *prefix,
             unsigned int plen, struct op_result *r)
{
    char p[FDP_UNDERLAY_IP_STRLEN];
    int error = fdp_dp_route_del(s->dp, prefix, plen);

    if (error == ENOENT) {
        return op_fail(r, RPC_FAILED, "route %s/%u: no such route added "
                       "with route/add (connected routes go with their "
                       "addresses: addr/del)", ip_text(prefix, p), plen);
    }
    return error ? op_fail(r, RPC_FAILED, "%s", strerror(error)) : 0;
}

static int
do_neigh_set(struct server *s, uint32_t port, const struct in6_addr *ip,
             const uint8_t mac[6], struct op_result *r)
{
    char x[FDP_UNDERLAY_IP_STRLEN];
    int error = fdp_dp_neigh_set(s->dp, port, ip, mac);

    if (error == EINVAL) {
        return op_fail(r, RPC_FAILED, "neighbour %s: the address must be a "
                       "host's and the MAC unicast and not zero",
                       ip_text(ip, x));
    }
    return error ? port_error(error, port, r) : 0;
}

static int
do_neigh_del(struct server *s, uint32_t port, const struct in6_addr *ip,
             struct op_result *r)
{
    char x[FDP_UNDERLAY_IP_STRLEN];
    int error = fdp_dp_neigh_del(s->dp, port, ip);

    if (error == ENOENT) {
        return op_fail(r, RPC_FAILED, "neighbour %s: port %" PRIu32 " has "
                       "no such entry (neigh/show)", ip_text(ip, x), port);
    }
    return error ? op_fail(r, RPC_FAILED, "%s", strerror(error)) : 0;
}

static int
do_neigh_config(struct server *s, const json_t *p, struct op_result *r)
{
    const json_t *limit = json_object_get(p, "limit");
    const json_t *aging = json_object_get(p, "aging");

    if ((limit && !json_is_integer(limit)) || (aging && !json_is_integer(aging))
        || (limit && (json_integer_value(limit) < 1
                      || json_integer_value(limit) > (1 << 20)))
        || (aging && (json_integer_value(aging) < 1
                      || json_integer_value(aging) > 3600))) {
        return op_fail(r, RPC_INVALID_PARAMS, "expected limit (1 to "
                       "1048576 entries) and/or aging (1 to 3600 seconds)");
    }
    if (limit) {
        int error = fdp_dp_neigh_set_limit(s->dp, (uint32_t)
                                           json_integer_value(limit));
        if (error) {
            return op_fail(r, RPC_FAILED, "limit: %s", strerror(error));
        }
    }
    if (aging) {
        fdp_dp_neigh_set_aging(s->dp, (uint32_t) json_integer_value(aging));
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Snapshot and restore.                                                   */

/* Lists grown to fit: the count first, then the copy with room for what
 * arrived meanwhile. */
static struct fdp_dp_addr *
list_addrs(struct fdp_dp *dp, size_t *np)
{
    size_t n = fdp_dp_addr_list(dp, NULL, 0);
    struct fdp_dp_addr *v = malloc((n + 16) * sizeof *v);

    *np = v ? fdp_dp_addr_list(dp, v, n + 16) : 0;
    if (*np > n + 16) {
        *np = n + 16;
    }
    return v;
}

static struct fdp_dp_route *
list_routes(struct fdp_dp *dp, size_t *np)
{
    size_t n = fdp_dp_route_list(dp, NULL, 0);
    struct fdp_dp_route *v = malloc((n + 1) * sizeof *v);

    *np = v ? fdp_dp_route_list(dp, v, n + 1) : 0;
    if (*np > n + 1) {
        *np = 0;                /* Unsorted: a change came between. */
    }
    return v;
}

static struct fdp_dp_neigh *
list_neighs(struct fdp_dp *dp, size_t *np)
{
    size_t n = fdp_dp_neigh_list(dp, NULL, 0);
    struct fdp_dp_neigh *v = malloc((n + 64) * sizeof *v);

    *np = v ? fdp_dp_neigh_list(dp, v, n + 64) : 0;
    if (*np > n + 64) {
        *np = n + 64;
    }
    return v;
}

json_t *
underlay_snapshot(struct server *s)
{
    json_t *o = json_object(), *addrs = json_array(), *macs = json_array();
    json_t *routes = json_array(), *neighs = json_array();
    size_t na, nr, nn;
    struct fdp_dp_addr *a = list_addrs(s->dp, &na);
    struct fdp_dp_route *rt = list_routes(s->dp, &nr);
    struct fdp_dp_neigh *ne = list_neighs(s->dp, &nn);
    char ip[FDP_UNDERLAY_IP_STRLEN], x[FDP_UNDERLAY_IP_STRLEN], m[18];
    uint32_t last_port = 0;
    bool ok = o && addrs && macs && routes && neighs && a && rt && ne;

    for (size_t i = 0; ok && i < na; i++) {
        char text[FDP_UNDERLAY_IP_STRLEN + 8];
        snprintf(text, sizeof text, "%s/%u", ip_text(&a[i].addr, ip),
                 a[i].plen);
        ok = !json_array_append_new(addrs, json_pack("{s:i, s:s}", "port",
                                                     (int) a[i].port_no,
                                                     "addr", text));
        uint8_t mac[6];
        bool given = false;
        if (ok && a[i].port_no != last_port
            && !fdp_dp_port_get_mac(s->dp, a[i].port_no, mac, &given)
            && given) {
            mac_text(mac, m);
            ok = !json_array_append_new(macs, json_pack(
                                            "{s:i, s:s}", "port",
                                            (int) a[i].port_no, "mac", m));
        }
        last_port = a[i].port_no;
    }
    /* Routes without a gateway first: the others' gateways need them. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; ok && i < nr; i++) {
            static const struct in6_addr zero;
            bool has_gw = memcmp(&rt[i].gw, &zero, sizeof zero);
            if (rt[i].connected || has_gw != (pass == 1)) {
                continue;
            }
            char text[FDP_UNDERLAY_IP_STRLEN + 8];
            snprintf(text, sizeof text, "%s/%u", ip_text(&rt[i].prefix, ip),
                     rt[i].plen);
            json_t *j = json_pack("{s:s, s:i, s:s}", "prefix", text, "port",
                                  (int) rt[i].port_no, "src",
                                  ip_text(&rt[i].src, x));
            if (j && has_gw) {
                json_object_set_new(j, "gw",
                                    json_string(ip_text(&rt[i].gw, ip)));
            }
            ok = !json_array_append_new(routes, j);
        }
    }
    for (size_t i = 0; ok && i < nn; i++) {
        if (ne[i].is_static) {
            mac_text(ne[i].mac, m);
            ok = !json_array_append_new(neighs, json_pack(
                                            "{s:i, s:s, s:s}", "port",
                                            (int) ne[i].port_no, "ip",
                                            ip_text(&ne[i].ip, ip),
                                            "mac", m));
        }
    }
    free(a);
    free(rt);
    free(ne);
    if (ok) {
        ok = !json_object_set_new(o, "addrs", addrs)
             && !json_object_set_new(o, "macs", macs)
             && !json_object_set_new(o, "routes", routes)
             && !json_object_set_new(o, "neighs", neighs)
             && !json_object_set_new(o, "limit", json_integer(
                                         fdp_dp_neigh_get_limit(s->dp)))
             && !json_object_set_new(o, "aging", json_integer(
                                         fdp_dp_neigh_get_aging(s->dp)));
        addrs = macs = routes = neighs = NULL;
    }
    json_decref(addrs);
    json_decref(macs);
    json_decref(routes);
    json_decref(neighs);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* True if 'ul' (a snapshot) holds nothing a default datapath lacks. */
bool
underlay_snapshot_empty(const json_t *ul)
{
    static const char *const lists[] = { "addrs", "macs", "routes",
                                         "neighs" };

    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        if (json_array_size(json_object_get(ul, lists[i]))) {
            return false;
        }
    }
    return (json_integer_value(json_object_get(ul, "limit")) == 8192
            && json_integer_value(json_object_get(ul, "aging")) == 900);
}

/* Applies the members of snapshot 'ul', each as its operation would;
 * with 'tolerant', a member that fails is logged and skipped.  Returns 0
 * or the first error (with 'r' set). */
static int
apply_snapshot(struct server *s, const json_t *ul, bool tolerant,
               struct op_result *r)
{
    /* In this order: a port's MAC before its addresses, the addresses
     * before the routes from them, the routes before the neighbours. */
    static const struct {
        const char *list;
    } parts[] = {
        { "macs" }, { "addrs" }, { "routes" }, { "neighs" },
    };
    size_t i;
    const json_t *item;

    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        const json_t *list = json_object_get(ul, parts[k].list);
        if (list && !json_is_array(list)) {
            return op_fail(r, RPC_INVALID_PARAMS, "underlay: \"%s\": "
                           "expected an array", parts[k].list);
        }
        json_array_foreach (list, i, item) {
            struct op_result one = { 0 };
            int error;
            uint32_t port = 0;
            struct in6_addr a, b, c;
            unsigned int plen;
            uint8_t mac[6];
            bool has_gw, has_src;
            switch (k) {
            case 0:
                error = param_port(item, &one, &port)
                        || param_mac(item, "mac", false, NULL, mac, &one);
                if (!error) {
                    error = fdp_dp_port_set_mac(s->dp, port, mac);
                    if (error) {
                        port_error(error, port, &one);
                    }
                }
                break;
            case 1:
                error = param_port(item, &one, &port)
                        || param_ip(item, "addr", false, NULL, &a, &plen,
                                    &one);
                if (!error) {
                    error = do_addr_add(s, port, &a, plen, NULL, &one);
                }
                break;
            case 2:
                error = param_port(item, &one, &port)
                        || param_ip(item, "prefix", false, NULL, &a, &plen,
                                    &one)
                        || param_ip(item, "gw", true, &has_gw, &b, NULL,
                                    &one)
                        || param_ip(item, "src", true, &has_src, &c, NULL,
                                    &one);
                if (!error) {
                    error = do_route_add(s, &a, plen, port,
                                         has_gw ? &b : NULL,
                                         has_src ? &c : NULL, &one);
                }
                break;
            default:
                error = param_port(item, &one, &port)
                        || param_ip(item, "ip", false, NULL, &a, NULL, &one)
                        || param_mac(item, "mac", false, NULL, mac, &one);
                if (!error) {
                    error = do_neigh_set(s, port, &a, mac, &one);
                }
                break;
            }
            if (error && tolerant) {
                vlog(L_WARN, "underlay: %s[%zu] not restored: %s",
                     parts[k].list, i, one.msg ? one.msg : "failed");
            } else if (error) {
                op_fail(r, one.code ? one.code : RPC_FAILED,
                        "underlay: %s[%zu]: %s", parts[k].list, i,
                        one.msg ? one.msg : "failed");
                free(one.msg);
                return EINVAL;
            }
            free(one.msg);
        }
    }
    struct op_result one = { 0 };
    json_t *cfg = json_object();
    static const char *const keys[] = { "limit", "aging" };
    for (size_t k = 0; cfg && k < 2; k++) {
        json_t *v = json_object_get(ul, keys[k]);
        if (v) {
            json_object_set(cfg, keys[k], v);
        }
    }
    int error = cfg ? do_neigh_config(s, cfg, &one) : ENOMEM;
    json_decref(cfg);
    if (error && !tolerant) {
        op_fail(r, RPC_INVALID_PARAMS, "underlay: %s",
                one.msg ? one.msg : "out of memory");
    } else if (error) {
        vlog(L_WARN, "underlay: limit and aging not restored: %s",
             one.msg ? one.msg : "out of memory");
        error = 0;
    }
    free(one.msg);
    return error;
}

int
underlay_restore(struct server *s, const json_t *ul, struct op_result *r)
{
    if (!ul) {
        return 0;
    }
    if (!json_is_object(ul) || !s->replaying) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"underlay\": only a "
                       "journal's snapshot holds the underlay beside flows");
    }
    return apply_snapshot(s, ul, true, r);
}

/* Removes every address, user route and static neighbour. */
static void
underlay_clear(struct server *s)
{
    size_t n;
    struct fdp_dp_route *rt = list_routes(s->dp, &n);
    for (size_t i = 0; rt && i < n; i++) {
        if (!rt[i].connected) {
            fdp_dp_route_del(s->dp, &rt[i].prefix, rt[i].plen);
        }
    }
    free(rt);
    struct fdp_dp_addr *a = list_addrs(s->dp, &n);
    for (size_t i = 0; a && i < n; i++) {
        fdp_dp_addr_del(s->dp, a[i].port_no, &a[i].addr, a[i].plen);
    }
    free(a);
    struct fdp_dp_neigh *ne = list_neighs(s->dp, &n);
    for (size_t i = 0; ne && i < n; i++) {
        if (ne[i].is_static) {
            fdp_dp_neigh_del(s->dp, ne[i].port_no, &ne[i].ip);
        }
    }
    free(ne);
}

/* What the underlay was before the operation being applied, for
 * underlay_undo(); NULL if none or out of memory (then no undo). */
static json_t *before;

static void
save_before(struct server *s)
{
    json_decref(before);
    before = s->replaying ? NULL : underlay_snapshot(s);
}

void
underlay_undo(struct server *s, const json_t *op)
{
    struct op_result r = { 0 };

    (void) op;
    if (!before) {
        vlog(L_ERR, "underlay: the change that could not be journalled "
             "stays made (no snapshot of before it)");
        return;
    }
    /* A MAC the change gave a port stays (the datapath has no "unset");
     * everything else is as it was. */
    underlay_clear(s);
    if (apply_snapshot(s, before, false, &r)) {
        vlog(L_ERR, "underlay: undoing a change the journal could not "
             "keep: %s", r.msg ? r.msg : "failed");
    }
    free(r.msg);
    json_decref(before);
    before = NULL;
}

/* ---------------------------------------------------------------------- */
/* Operations.                                                             */

/* A failure while replaying the journal is a warning and a skip. */
static int
replay_tolerant(struct server *s, int error, struct op_result *r,
                const char *kind)
{
    if (error && s->replaying) {
        vlog(L_WARN, "journal: %s skipped: %s", kind,
             r->msg ? r->msg : strerror(error));
        free(r->msg);
        r->msg = NULL;
        r->code = 0;
        return 0;
    }
    return error;
}

int
op_addr_add(struct server *s, const json_t *op, struct op_result *r)
{
    uint32_t port;
    struct in6_addr a;
    unsigned int plen;
    uint8_t mac[6];
    bool has_mac;
    int error = (param_port(op, r, &port)
                 || param_ip(op, "addr", false, NULL, &a, &plen, r)
                 || param_mac(op, "mac", true, &has_mac, mac, r))
                ? EINVAL : 0;

    if (!error) {
        save_before(s);
        error = do_addr_add(s, port, &a, plen, has_mac ? mac : NULL, r);
    }
    return replay_tolerant(s, error, r, "addr-add");
}

int
op_addr_del(struct server *s, const json_t *op, struct op_result *r)
{
    uint32_t port;
    struct in6_addr a;
    unsigned int plen;
    int error = (param_port(op, r, &port)
                 || param_ip(op, "addr", false, NULL, &a, &plen, r))
                ? EINVAL : 0;

    if (!error) {
        save_before(s);
        error = do_addr_del(s, port, &a, plen, r);
    }
    return replay_tolerant(s, error, r, "addr-del");
}

int
op_route_add(struct server *s, const json_t *op, struct op_result *r)
{
    uint32_t port;
    struct in6_addr p, gw, src;
    unsigned int plen;
    bool has_gw, has_src;
    int error = (param_ip(op, "prefix", false, NULL, &p, &plen, r)
                 || param_port(op, r, &port)
                 || param_ip(op, "gw", true, &has_gw, &gw, NULL, r)
                 || param_ip(op, "src", true, &has_src, &src, NULL, r))
                ? EINVAL : 0;

    if (!error) {
        save_before(s);
        error = do_route_add(s, &p, plen, port, has_gw ? &gw : NULL,
                             has_src ? &src : NULL, r);
    }
    return replay_tolerant(s, error, r, "route-add");
}

int
op_route_del(struct server *s, const json_t *op, struct op_result *r)
{
    struct in6_addr p;
    unsigned int plen;
    int error = param_ip(op, "prefix", false, NULL, &p, &plen, r);

    if (!error) {
        save_before(s);
        error = do_route_del(s, &p, plen, r);
    }
    return replay_tolerant(s, error, r, "route-del");
}

int
op_neigh_set(struct server *s, const json_t *op, struct op_result *r)
{
    uint32_t port;
    struct in6_addr ip;
    uint8_t mac[6];
    int error = (param_port(op, r, &port)
                 || param_ip(op, "ip", false, NULL, &ip, NULL, r)
                 || param_mac(op, "mac", false, NULL, mac, r)) ? EINVAL : 0;

    if (!error) {
        save_before(s);
        error = do_neigh_set(s, port, &ip, mac, r);
    }
    return replay_tolerant(s, error, r, "neigh-set");
}

int
op_neigh_del(struct server *s, const json_t *op, struct op_result *r)
{
    uint32_t port;
    struct in6_addr ip;
    int error = (param_port(op, r, &port)
                 || param_ip(op, "ip", false, NULL, &ip, NULL, r))
                ? EINVAL : 0;

    if (!error) {
        save_before(s);
        error = do_neigh_del(s, port, &ip, r);
    }
    return replay_tolerant(s, error, r, "neigh-del");
}

int
op_neigh_config(struct server *s, const json_t *op, struct op_result *r)
{
    save_before(s);
    return replay_tolerant(s, do_neigh_config(s, op, r), r, "neigh-config");
}

/* ---------------------------------------------------------------------- */
/* Methods.                                                                */

/* The method's params as operation 'kind', applied (and journalled). */
static json_t *
change(struct server *s, const json_t *params, const char *kind,
       struct op_result *r)
{
    json_t *op = json_copy((json_t *) params);

    if (!op || json_object_set_new(op, "op", json_string(kind))) {
        json_decref(op);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    int error = apply_op(s, op, r);
    json_decref(op);
    json_decref(before);
    before = NULL;
    if (error) {
        return NULL;
    }
    vlog(L_INFO, "underlay: %s", kind);
    return json_object();
}

json_t *
h_addr_add(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "addr-add", r);
}

json_t *
h_addr_del(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "addr-del", r);
}

json_t *
h_route_add(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "route-add", r);
}

json_t *
h_route_del(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "route-del", r);
}

json_t *
h_neigh_set(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "neigh-set", r);
}

json_t *
h_neigh_del(struct server *s, const json_t *p, struct op_result *r)
{
    return change(s, p, "neigh-del", r);
}

json_t *
h_neigh_config(struct server *s, const json_t *p, struct op_result *r)
{
    if (json_object_size(p) && !change(s, p, "neigh-config", r)) {
        return NULL;
    }
    return json_pack("{s:I, s:I}", "limit",
                     (json_int_t) fdp_dp_neigh_get_limit(s->dp), "aging",
                     (json_int_t) fdp_dp_neigh_get_aging(s->dp));
}

/* {text: TEXT} from a memory stream's contents. */
static json_t *
text_result(char *text, struct op_result *r)
{
    json_t *o = text ? json_pack("{s:s}", "text", text) : NULL;

    free(text);
    if (!o) {
        op_fail(r, RPC_FAILED, "out of memory");
    }
    return o;
}

json_t *
h_addr_show(struct server *s, const json_t *p, struct op_result *r)
{
    size_t n;
    struct fdp_dp_addr *a = list_addrs(s->dp, &n);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    (void) p;
    if (!a || !f) {
        free(a);
        if (f) {
            fclose(f);
        }
        free(text);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    fprintf(f, "%-6s %-44s %s\n", "Port", "Address", "MAC");
    for (size_t i = 0; i < n; i++) {
        char ip[FDP_UNDERLAY_IP_STRLEN], addr[FDP_UNDERLAY_IP_STRLEN + 8];
        char m[18] = "?";
        uint8_t mac[6];
        if (!fdp_dp_port_get_mac(s->dp, a[i].port_no, mac, NULL)) {
            mac_text(mac, m);
        }
        snprintf(addr, sizeof addr, "%s/%u", ip_text(&a[i].addr, ip),
                 a[i].plen);
        fprintf(f, "%-6" PRIu32 " %-44s %s\n", a[i].port_no, addr, m);
    }
    fclose(f);
    free(a);
    return text_result(text, r);
}

/* One route as ovs-appctl ovs/route/show prints it, with "dev PORT". */
static void
route_line(FILE *f, const struct fdp_dp_route *rt)
{
    static const struct in6_addr zero;
    char ip[FDP_UNDERLAY_IP_STRLEN];

    fprintf(f, "%s%s/%u dev %" PRIu32, rt->connected ? "Cached: " : "User: ",
            ip_text(&rt->prefix, ip), rt->plen, rt->port_no);
    if (memcmp(&rt->gw, &zero, sizeof zero)) {
        fprintf(f, " GW %s", ip_text(&rt->gw, ip));
    }
    fprintf(f, " SRC %s\n", ip_text(&rt->src, ip));
}

json_t *
h_route_show(struct server *s, const json_t *p, struct op_result *r)
{
    size_t n;
    struct fdp_dp_route *rt = list_routes(s->dp, &n);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    (void) p;
    if (!rt || !f) {
        free(rt);
        if (f) {
            fclose(f);
        }
        free(text);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    fputs("Route Table:\n", f);
    for (size_t i = 0; i < n; i++) {
        route_line(f, &rt[i]);
    }
    fclose(f);
    free(rt);
    return text_result(text, r);
}

json_t *
h_route_lookup(struct server *s, const json_t *p, struct op_result *r)
{
    struct in6_addr dst;
    struct fdp_dp_route rt;
    char ip[FDP_UNDERLAY_IP_STRLEN];
    char *text = NULL;

    if (param_ip(p, "dst", false, NULL, &dst, NULL, r)) {
        return NULL;
    }
    if (fdp_dp_route_lookup(s->dp, &dst, &rt)) {
        op_fail(r, RPC_FAILED, "%s: no route", ip_text(&dst, ip));
        return NULL;
    }
    /* ovs-appctl ovs/route/lookup's reply: src, gateway, dev. */
    static const struct in6_addr zero;
    char src[FDP_UNDERLAY_IP_STRLEN];
    ip_text(&rt.src, src);
    if (memcmp(&rt.gw, &zero, sizeof zero)) {
        ip_text(&rt.gw, ip);
    } else {
        ip_text(IN6_IS_ADDR_V4MAPPED(&dst) ? &(struct in6_addr) {
                    .s6_addr = { [10] = 0xff, [11] = 0xff } } : &zero, ip);
    }
    if (asprintf(&text, "src %s\ngateway %s\ndev %" PRIu32 "\n", src, ip,
                 rt.port_no) < 0) {
        text = NULL;
    }
    return text_result(text, r);
}

json_t *
h_route_resolve(struct server *s, const json_t *p, struct op_result *r)
{
    struct in6_addr dst;
    struct fdp_dp_nexthop nh;
    char ip[FDP_UNDERLAY_IP_STRLEN], src[FDP_UNDERLAY_IP_STRLEN];
    char sm[18], dm[18];
    char *text = NULL;

    if (param_ip(p, "dst", false, NULL, &dst, NULL, r)) {
        return NULL;
    }
    int error = fdp_dp_route_resolve(s->dp, &dst, &nh);
    if (error == EHOSTUNREACH) {
        op_fail(r, RPC_FAILED, "%s: no route", ip_text(&dst, ip));
        return NULL;
    }
    if (error == EAGAIN) {
        op_fail(r, RPC_FAILED, "%s: next hop %s unknown on port %" PRIu32
                ": asked (neigh/show once it answers)", ip_text(&dst, ip),
                ip_text(&nh.hop, src), nh.port_no);
        return NULL;
    }
    mac_text(nh.src_mac, sm);
    mac_text(nh.dst_mac, dm);
    if (asprintf(&text, "dev %" PRIu32 " src %s next hop %s\n"
                 "src_mac %s dst_mac %s\n", nh.port_no,
                 ip_text(&nh.src, src), ip_text(&nh.hop, ip), sm, dm) < 0) {
        text = NULL;
    }
    return text_result(text, r);
}

json_t *
h_neigh_show(struct server *s, const json_t *p, struct op_result *r)
{
    size_t n;
    struct fdp_dp_neigh *ne = list_neighs(s->dp, &n);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    (void) p;
    if (!ne || !f) {
        free(ne);
        if (f) {
            fclose(f);
        }
        free(text);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    /* ovs-appctl tnl/neigh/show's table, with the port where Open
     * vSwitch names the bridge. */
    fputs("IP                                            MAC          "
          "       Port\n", f);
    fputs("================================================="
          "=========================\n", f);
    for (size_t i = 0; i < n; i++) {
        char ip[FDP_UNDERLAY_IP_STRLEN], m[18];
        mac_text(ne[i].mac, m);
        fprintf(f, "%-46s%s   %" PRIu32 "%s%s\n", ip_text(&ne[i].ip, ip), m,
                ne[i].port_no, ne[i].is_static ? " STATIC" : "",
                ne[i].stale ? " STALE" : "");
    }
    fclose(f);
    free(ne);
    return text_result(text, r);
}

json_t *
h_neigh_flush(struct server *s, const json_t *p, struct op_result *r)
{
    (void) p;
    (void) r;
    size_t n = fdp_dp_neigh_flush(s->dp);
    vlog(L_INFO, "underlay: %zu learned neighbours flushed", n);
    return json_pack("{s:I}", "n", (json_int_t) n);
}

json_t *
h_underlay_stats(struct server *s, const json_t *p, struct op_result *r)
{
    struct fdp_dp_underlay_stats st;

    (void) p;
    (void) r;
    fdp_dp_underlay_get_stats(s->dp, &st);
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                     "s:I, s:I, s:I, s:I, s:I}",
                     "n_no_route", (json_int_t) st.n_no_route,
                     "n_bad_source", (json_int_t) st.n_bad_source,
                     "n_no_neigh", (json_int_t) st.n_no_neigh,
                     "n_requests", (json_int_t) st.n_requests,
                     "n_requests_limited",
                     (json_int_t) st.n_requests_limited,
                     "n_replies", (json_int_t) st.n_replies,
                     "n_learned", (json_int_t) st.n_learned,
                     "n_confirmed", (json_int_t) st.n_confirmed,
                     "n_evicted", (json_int_t) st.n_evicted,
                     "n_expired", (json_int_t) st.n_expired,
                     "n_neighs", (json_int_t) st.n_neighs,
                     "n_static", (json_int_t) st.n_static,
                     "limit", (json_int_t) fdp_dp_neigh_get_limit(s->dp),
                     "aging", (json_int_t) fdp_dp_neigh_get_aging(s->dp),
                     "version", (json_int_t) st.version);
}

/* ---------------------------------------------------------------------- */
/* Start-up options.                                                       */

/* --addr=PORT:IP/LEN[,mac=MAC]: checked, and applied to 's' unless it
 * is NULL. */
static void
startup_addr(struct server *s, const char *spec)
{
    char *copy = strdup(spec);
    char *colon = copy ? strchr(copy, ':') : NULL;
    char *end, *msg = NULL;
    struct in6_addr a;
    unsigned int plen;
    uint8_t mac[6];
    bool has_mac = false;
    struct op_result r = { 0 };

    if (!copy) {
        fatal("out of memory");
    }
    unsigned long port = colon ? strtoul(copy, &end, 10) : 0;
    if (!colon || end != colon || !port || port > 0xfeff) {
        fatal("--addr=%s: expected PORT:IP/LEN[,mac=MAC]", spec);
    }
    char *comma = strchr(colon + 1, ',');
    if (comma) {
        *comma = '\0';
        if (strncmp(comma + 1, "mac=", 4)
            || fdp_underlay_parse_mac(comma + 5, mac, &msg)) {
            fatal("--addr=%s: %s", spec,
                  msg ? msg : "expected mac=MAC after the address");
        }
        has_mac = true;
    }
    if (fdp_underlay_parse_ip(colon + 1, &a, &plen, &msg)) {
        fatal("--addr=%s: %s", spec, msg ? msg : "out of memory");
    }
    if (!s) {
        free(copy);
        return;
    }
    if (do_addr_add(s, (uint32_t) port, &a, plen, has_mac ? mac : NULL,
                    &r)) {
        /* The journal may have made it already: the same is no error. */
        size_t n;
        struct fdp_dp_addr *v = list_addrs(s->dp, &n);
        bool same = false;
        for (size_t i = 0; v && i < n; i++) {
            same |= (v[i].port_no == port && v[i].plen == plen
                     && !memcmp(&v[i].addr, &a, sizeof a));
        }
        free(v);
        if (!same) {
            fatal("--addr=%s: %s", spec, r.msg ? r.msg : "failed");
        }
        free(r.msg);
    }
    vlog(L_INFO, "--addr=%s", spec);
    free(copy);
}

/* --route=PREFIX/LEN,PORT[,GW][,src=IP]: checked, and applied to 's'
 * unless it is NULL. */
static void
startup_route(struct server *s, const char *spec)
{
    char *copy = strdup(spec), *save = NULL, *msg = NULL;
    struct in6_addr p, gw, src;
    unsigned int plen;
    unsigned long port = 0;
    bool has_gw = false, has_src = false;
    struct op_result r = { 0 };
    int n = 0;

    if (!copy) {
        fatal("out of memory");
    }
    for (char *w = strtok_r(copy, ",", &save); w;
         w = strtok_r(NULL, ",", &save), n++) {
        int error = 0;
        if (n == 0) {
            error = fdp_underlay_parse_ip(w, &p, &plen, &msg);
        } else if (n == 1) {
            char *end;
            port = strtoul(w, &end, 10);
            if (*end || !port || port > 0xfeff) {
                fatal("--route=%s: \"%s\": expected a port number from 1 "
                      "to 65279", spec, w);
            }
        } else if (!strncmp(w, "src=", 4) && !has_src) {
            error = fdp_underlay_parse_ip(w + 4, &src, NULL, &msg);
            has_src = true;
        } else if (!has_gw && !has_src) {
            error = fdp_underlay_parse_ip(w, &gw, NULL, &msg);
            has_gw = true;
        } else {
            fatal("--route=%s: \"%s\": unexpected", spec, w);
        }
        if (error) {
            fatal("--route=%s: %s", spec, msg ? msg : "out of memory");
        }
    }
    if (n < 2) {
        fatal("--route=%s: expected PREFIX/LEN,PORT[,GW][,src=IP]", spec);
    }
    if (!s) {
        free(copy);
        return;
    }
    if (do_route_add(s, &p, plen, (uint32_t) port, has_gw ? &gw : NULL,
                     has_src ? &src : NULL, &r)) {
        /* The journal may have made it already: the same is no error. */
        struct fdp_dp_route rt;
        static const struct in6_addr zero;
        bool same = (!fdp_dp_route_lookup(s->dp, &p, &rt) && !rt.connected
                     && rt.plen == plen && rt.port_no == port
                     && !memcmp(&rt.gw, has_gw ? &gw : &zero, sizeof gw)
                     && (!has_src || !memcmp(&rt.src, &src, sizeof src)));
        if (!same) {
            fatal("--route=%s: %s", spec, r.msg ? r.msg : "failed");
        }
        free(r.msg);
    }
    vlog(L_INFO, "--route=%s", spec);
    free(copy);
}

void
underlay_check_option(bool addr, const char *spec)
{
    if (addr) {
        startup_addr(NULL, spec);
    } else {
        startup_route(NULL, spec);
    }
}

void
underlay_startup(struct server *s, const char *const *addrs, size_t n_addrs,
                 const char *const *routes, size_t n_routes)
{
    for (size_t i = 0; i < n_addrs; i++) {
        startup_addr(s, addrs[i]);
    }
    for (size_t i = 0; i < n_routes; i++) {
        startup_route(s, routes[i]);
    }
}
