/*
 * flowdp-ctl's commands for the underlay (flowdpd-underlay.c), the
 * network under tunnel ports, as Open vSwitch's ovs-appctl ovs/route/...
 * and tnl/neigh/... have them, with the datapath's port numbers where
 * Open vSwitch names a bridge:
 *   addr/add PORT IP/LEN [mac=MAC]   an address on a port (and its
 *                                    connected route); mac= sets the MAC
 *                                    the port's underlay uses
 *   addr/del PORT IP/LEN             removes it, with the routes from it
 *   addr/show                        the addresses and the ports' MACs
 *   route/add PREFIX/LEN PORT [GW] [src=IP]
 *   route/del PREFIX/LEN
 *   route/show                       as ovs-appctl ovs/route/show
 *   route/lookup IP                  as ovs-appctl ovs/route/lookup
 *   route/resolve IP                 as a tunnel resolves IP: port,
 *                                    source, MACs; an unknown next hop
 *                                    fails and is asked for
 *   neigh/set PORT IP MAC            a static neighbour
 *   neigh/del PORT IP
 *   neigh/show                       as ovs-appctl tnl/neigh/show
 *   neigh/flush                      forgets the learned neighbours
 *   neigh/config [limit=N] [aging=SECONDS]
 *                                    the cache's bound and aging (with
 *                                    neither, prints them)
 *   underlay/stats                   counters: resolutions that failed by
 *                                    reason, ARP and ND sent and answered,
 *                                    the cache's churn
 * Arguments are checked here first, so that a typo is named before
 * anything is sent.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "utilities/ctl.h"
#include "utilities/tool.h"

static void
flush_out(const char *command)
{
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

static void
nargs(const char *command, int argc, int min, int max, const char *usage)
{
    if (argc - 1 < min || argc - 1 > max) {
        fatal("%s: expected %s", command, usage);
    }
}

static int
port_arg(const char *command, const char *arg)
{
    char what[64];

    snprintf(what, sizeof what, "%s: PORT", command);
    uint64_t port = parse_u64(arg, 0xfeff, what);
    if (!port) {
        fatal("%s: port 0 is not a port (1 to 65279)", command);
    }
    return (int) port;
}

/* Checks 'arg' as an IP (with_len false) or IP/LEN; returns it. */
static const char *
ip_arg(const char *command, const char *what, const char *arg, bool with_len)
{
    struct in6_addr a;
    unsigned int plen;
    char *msg = NULL;

    if (fdp_underlay_parse_ip(arg, &a, with_len ? &plen : NULL, &msg)) {
        fatal("%s: %s: %s", command, what, msg ? msg : "out of memory");
    }
    return arg;
}

static const char *
mac_arg(const char *command, const char *what, const char *arg)
{
    uint8_t mac[6];
    char *msg = NULL;

    if (fdp_underlay_parse_mac(arg, mac, &msg)) {
        fatal("%s: %s: %s", command, what, msg ? msg : "out of memory");
    }
    return arg;
}

static void
print_text(const char *command, const char *method)
{
    json_t *r = ctl_call(command, method, json_object());
    const char *text = json_string_value(json_object_get(r, "text"));

    fputs(text ? text : "", stdout);
    json_decref(r);
    flush_out(command);
}

void
cmd_addr_add(int argc, char *argv[])
{
    static const char usage[] = "PORT IP/LEN [mac=MAC]";

    nargs("addr/add", argc, 2, 3, usage);
    json_t *p = json_pack("{s:i, s:s}", "port", port_arg("addr/add", argv[1]),
                          "addr", ip_arg("addr/add", "IP/LEN", argv[2],
                                         true));
    if (argc == 4) {
        if (strncmp(argv[3], "mac=", 4)) {
            fatal("addr/add: \"%s\": expected mac=MAC", argv[3]);
        }
        json_object_set_new(p, "mac", json_string(mac_arg("addr/add", "mac",
                                                          argv[3] + 4)));
    }
    json_decref(ctl_call("addr/add", "addr/add", p));
}

void
cmd_addr_del(int argc, char *argv[])
{
    nargs("addr/del", argc, 2, 2, "PORT IP/LEN");
    json_decref(ctl_call("addr/del", "addr/del",
                         json_pack("{s:i, s:s}", "port",
                                   port_arg("addr/del", argv[1]), "addr",
                                   ip_arg("addr/del", "IP/LEN", argv[2],
                                          true))));
}

void
cmd_addr_show(int argc, char *argv[])
{
    (void) argv;
    nargs("addr/show", argc, 0, 0, "no arguments");
    print_text("addr/show", "addr/show");
}

void
cmd_route_add(int argc, char *argv[])
{
    static const char usage[] = "PREFIX/LEN PORT [GW] [src=IP]";

    nargs("route/add", argc, 2, 4, usage);
    json_t *p = json_pack("{s:s, s:i}", "prefix",
                          ip_arg("route/add", "PREFIX/LEN", argv[1], true),
                          "port", port_arg("route/add", argv[2]));
    bool has_gw = false, has_src = false;
    for (int i = 3; i < argc; i++) {
        if (!strncmp(argv[i], "src=", 4) && !has_src) {
            json_object_set_new(p, "src", json_string(
                                    ip_arg("route/add", "src", argv[i] + 4,
                                           false)));
            has_src = true;
        } else if (!has_gw && !has_src && strncmp(argv[i], "src=", 4)) {
            json_object_set_new(p, "gw", json_string(
                                    ip_arg("route/add", "GW", argv[i],
                                           false)));
            has_gw = true;
        } else {
            fatal("route/add: \"%s\": unexpected (expected %s)", argv[i],
                  usage);
        }
    }
    json_decref(ctl_call("route/add", "route/add", p));
}

void
cmd_route_del(int argc, char *argv[])
{
    nargs("route/del", argc, 1, 1, "PREFIX/LEN");
    json_decref(ctl_call("route/del", "route/del",
                         json_pack("{s:s}", "prefix",
                                   ip_arg("route/del", "PREFIX/LEN", argv[1],
                                          true))));
}

void
cmd_route_show(int argc, char *argv[])
{
    (void) argv;
    nargs("route/show", argc, 0, 0, "no arguments");
    print_text("route/show", "route/show");
}

static void
lookup(const char *command, int argc, char *argv[])
{
    nargs(command, argc, 1, 1, "IP");
    json_t *r = ctl_call(command, command,
                         json_pack("{s:s}", "dst",
                                   ip_arg(command, "IP", argv[1], false)));
    const char *text = json_string_value(json_object_get(r, "text"));
    fputs(text ? text : "", stdout);
    json_decref(r);
    flush_out(command);
}

void
cmd_route_lookup(int argc, char *argv[])
{
    lookup("route/lookup", argc, argv);
}

void
cmd_route_resolve(int argc, char *argv[])
{
    lookup("route/resolve", argc, argv);
}

void
cmd_neigh_set(int argc, char *argv[])
{
    nargs("neigh/set", argc, 3, 3, "PORT IP MAC");
    json_decref(ctl_call("neigh/set", "neigh/set",
                         json_pack("{s:i, s:s, s:s}", "port",
                                   port_arg("neigh/set", argv[1]), "ip",
                                   ip_arg("neigh/set", "IP", argv[2], false),
                                   "mac",
                                   mac_arg("neigh/set", "MAC", argv[3]))));
}

void
cmd_neigh_del(int argc, char *argv[])
{
    nargs("neigh/del", argc, 2, 2, "PORT IP");
    json_decref(ctl_call("neigh/del", "neigh/del",
                         json_pack("{s:i, s:s}", "port",
                                   port_arg("neigh/del", argv[1]), "ip",
                                   ip_arg("neigh/del", "IP", argv[2],
                                          false))));
}

void
cmd_neigh_show(int argc, char *argv[])
{
    (void) argv;
    nargs("neigh/show", argc, 0, 0, "no arguments");
    print_text("neigh/show", "neigh/show");
}

void
cmd_neigh_flush(int argc, char *argv[])
{
    (void) argv;
    nargs("neigh/flush", argc, 0, 0, "no arguments");
    json_decref(ctl_call("neigh/flush", "neigh/flush", json_object()));
    /* ovs-appctl tnl/neigh/flush's reply. */
    puts("OK");
    flush_out("neigh/flush");
}

static uint64_t
count(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);

    return json_is_integer(v) && json_integer_value(v) >= 0
           ? (uint64_t) json_integer_value(v) : 0;
}

void
cmd_neigh_config(int argc, char *argv[])
{
    json_t *p = json_object();

    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "limit=", 6)) {
            uint64_t v = parse_u64(argv[i] + 6, 1 << 20, "neigh/config: "
                                   "limit");
            if (!v) {
                fatal("neigh/config: limit: at least 1");
            }
            json_object_set_new(p, "limit", json_integer((json_int_t) v));
        } else if (!strncmp(argv[i], "aging=", 6)) {
            uint64_t v = parse_u64(argv[i] + 6, 3600, "neigh/config: aging");
            if (!v) {
                fatal("neigh/config: aging: at least 1 second");
            }
            json_object_set_new(p, "aging", json_integer((json_int_t) v));
        } else {
            fatal("neigh/config: \"%s\": expected limit=N or aging=SECONDS",
                  argv[i]);
        }
    }
    json_t *r = ctl_call("neigh/config", "neigh/config", p);
    if (argc == 1) {
        printf("limit=%" PRIu64 " aging=%" PRIu64 "\n", count(r, "limit"),
               count(r, "aging"));
    }
    json_decref(r);
    flush_out("neigh/config");
}

void
cmd_underlay_stats(int argc, char *argv[])
{
    static const struct {
        const char *key, *label;
    } rows[] = {
        { "n_no_route", "dropped: no route" },
        { "n_bad_source", "dropped: source not local" },
        { "n_no_neigh", "dropped: neighbour unknown" },
        { "n_requests", "ARP requests and solicitations sent" },
        { "n_requests_limited", "requests not sent (rate limit)" },
        { "n_replies", "requests answered" },
        { "n_learned", "neighbours learned or changed" },
        { "n_confirmed", "neighbours confirmed" },
        { "n_evicted", "neighbours evicted (limit)" },
        { "n_expired", "neighbours expired" },
        { "n_neighs", "learned neighbours now" },
        { "n_static", "static neighbours now" },
        { "limit", "limit" },
        { "aging", "aging (seconds)" },
    };

    (void) argv;
    nargs("underlay/stats", argc, 0, 0, "no arguments");
    json_t *r = ctl_call("underlay/stats", "underlay/stats", json_object());
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        printf("%-38s %" PRIu64 "\n", rows[i].label, count(r, rows[i].key));
    }
    json_decref(r);
    flush_out("underlay/stats");
}
