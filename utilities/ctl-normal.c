/*
 * flowdp-ctl's commands for NORMAL's learning switch (flowdpd-normal.c):
 *   fdb/show [SWITCH]           the learned addresses, as ovs-appctl
 *                               fdb/show prints them
 *   fdb/flush [SWITCH]          forgets them
 *   fdb/stats-show [SWITCH]     the table's size, aging and counters
 *   fdb/warp SECONDS            moves the table's clock ahead (tests of
 *                               aging; ovs-appctl time/warp's role)
 *   set-fdb [mac-table-size=N] [mac-aging-time=S]
 *                               vswitchd's other_config settings
 *   set-port PORT [vlan_mode=M] [tag=N|tag=] [trunks=LIST|trunks=]
 *                               a port's VLAN settings (ovs-vsctl set
 *                               port); without settings, prints them
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

/* "COMMAND [SWITCH]": at most a switch name, which is ignored (flowdpd
 * has one datapath). */
static void
optional_switch(const char *command, int argc, char *argv[])
{
    if (argc > 2 || (argc == 2 && !ctl_is_switch_name(argv[1]))) {
        fatal("%s: expected at most a switch name", command);
    }
}

void
cmd_fdb_show(int argc, char *argv[])
{
    optional_switch("fdb/show", argc, argv);
    json_t *r = ctl_call("fdb/show", "fdb/show", json_object());
    const char *text = json_string_value(json_object_get(r, "text"));
    fputs(text ? text : "", stdout);
    json_decref(r);
    flush_out("fdb/show");
}

void
cmd_fdb_flush(int argc, char *argv[])
{
    optional_switch("fdb/flush", argc, argv);
    json_decref(ctl_call("fdb/flush", "fdb/flush", json_object()));
    /* ovs-appctl's reply. */
    puts("table successfully flushed");
    flush_out("fdb/flush");
}

static uint64_t
count(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);

    return json_is_integer(v) && json_integer_value(v) >= 0
           ? (uint64_t) json_integer_value(v) : 0;
}

void
cmd_fdb_stats_show(int argc, char *argv[])
{
    optional_switch("fdb/stats-show", argc, argv);
    json_t *r = ctl_call("fdb/stats-show", "fdb/stats", json_object());
    /* The first lines are Open vSwitch's fdb/stats-show; the last two
     * are flowdp's own. */
    printf("Statistics for bridge \"br0\":\n");
    printf("  Current/maximum MAC entries in the table: %" PRIu64 "/%"
           PRIu64 "\n", count(r, "n_entries"), count(r, "max_entries"));
    printf("  Total number of learned MAC entries     : %" PRIu64 "\n",
           count(r, "n_learned"));
    printf("  Total number of expired MAC entries     : %" PRIu64 "\n",
           count(r, "n_expired"));
    printf("  Total number of evicted MAC entries     : %" PRIu64 "\n",
           count(r, "n_evicted"));
    printf("  Total number of port moved MAC entries  : %" PRIu64 "\n",
           count(r, "n_moved"));
    printf("  MAC aging time (seconds)                : %" PRIu64 "\n",
           count(r, "aging"));
    printf("  Learning notes lost to a full queue     : %" PRIu64 "\n",
           count(r, "n_notes_dropped"));
    printf("  Packets output to LOCAL (dropped)       : %" PRIu64 "\n",
           count(r, "n_local_dropped"));
    json_decref(r);
    flush_out("fdb/stats-show");
}

void
cmd_fdb_warp(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("fdb/warp: expected SECONDS");
    }
    uint64_t s = parse_u64(argv[1], 86400 * 365, "fdb/warp");
    if (!s) {
        fatal("fdb/warp: SECONDS must be at least 1");
    }
    json_decref(ctl_call("fdb/warp", "fdb/warp",
                         json_pack("{s:I}", "seconds", (json_int_t) s)));
    puts("warped");
    flush_out("fdb/warp");
}

void
cmd_set_fdb(int argc, char *argv[])
{
    json_t *params = json_object();

    if (argc < 2) {
        fatal("set-fdb: expected mac-table-size=N and/or mac-aging-time=S");
    }
    for (int i = 1; i < argc; i++) {
        static const char size[] = "mac-table-size=";
        static const char aging[] = "mac-aging-time=";
        if (!strncmp(argv[i], size, sizeof size - 1)) {
            uint64_t v = parse_u64(argv[i] + sizeof size - 1, 4194304,
                                   "set-fdb: mac-table-size");
            json_object_set_new(params, "size", json_integer((json_int_t) v));
        } else if (!strncmp(argv[i], aging, sizeof aging - 1)) {
            uint64_t v = parse_u64(argv[i] + sizeof aging - 1, 86400,
                                   "set-fdb: mac-aging-time");
            json_object_set_new(params, "aging",
                                json_integer((json_int_t) v));
        } else {
            fatal("set-fdb: unknown setting \"%s\" (expected "
                  "mac-table-size=N or mac-aging-time=S)", argv[i]);
        }
    }
    json_decref(ctl_call("set-fdb", "fdb/set", params));
}

/* The VLAN settings argv[first..argc), checked here too so that a typo
 * is named before anything is sent. */
json_t *
ctl_vlan_settings(const char *command, int first, int argc, char *argv[])
{
    json_t *words = json_array();
    struct fdp_port_vlan cfg;

    fdp_port_vlan_init(&cfg);
    for (int i = first; i < argc; i++) {
        char *msg = NULL;
        if (fdp_port_vlan_parse(&cfg, argv[i], &msg)) {
            fatal("%s: %s", command, msg ? msg : argv[i]);
        }
        json_array_append_new(words, json_string(argv[i]));
    }
    return words;
}

void
cmd_set_port(int argc, char *argv[])
{
    if (argc < 2) {
        fatal("set-port: expected PORT [vlan_mode=MODE] [tag=VLAN] "
              "[trunks=VLAN[,VLAN...]]");
    }
    uint32_t port = (uint32_t) parse_u64(argv[1], 0xfeff, "set-port");
    if (!port) {
        fatal("set-port: port 0 is not a port (1 to 65279)");
    }
    json_t *words = ctl_vlan_settings("set-port", 2, argc, argv);
    json_t *r = ctl_call("set-port", "set-port",
                         json_pack("{s:i, s:o}", "port", (int) port,
                                   "settings", words));
    if (argc == 2) {
        const char *vlan = json_string_value(json_object_get(r, "vlan"));
        printf("port %" PRIu32 ": %s\n", port, vlan ? vlan : "?");
    }
    json_decref(r);
    flush_out("set-port");
}
