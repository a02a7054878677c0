/*
 * flowdp-ctl's OpenFlow channel commands, over flowdpd's methods of the
 * same names (utilities/flowdpd-ofconn.c):
 *
 *   set-controller TARGET...   connect to these controllers (tcp:IP[:PORT],
 *                              ssl:IP[:PORT], unix:PATH) instead of the
 *                              ones before; journalled with --db
 *   del-controller             no controllers
 *   get-controller             the controllers, one per line, as
 *                              ovs-vsctl get-controller prints them
 *   set-fail-mode secure|standalone
 *
 * As ovs-vsctl's, a bridge name may come first (flowdpd has one datapath,
 * so any name); it is recognised by not looking like a target.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/ctl.h"
#include "utilities/tool.h"

/* Is 'arg' a target (or a fail mode) rather than a bridge name? */
static bool
is_target(const char *arg)
{
    return !strncmp(arg, "tcp:", 4) || !strncmp(arg, "ssl:", 4)
           || !strncmp(arg, "unix:", 5);
}

static void
flush(const char *command)
{
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

void
cmd_set_controller(int argc, char *argv[])
{
    int first = argc > 1 && !is_target(argv[1]) ? 2 : 1;
    json_t *targets = json_array();

    if (first >= argc) {
        fatal("set-controller: expected [BRIDGE] TARGET... (tcp:IP[:PORT], "
              "ssl:IP[:PORT] or unix:PATH)");
    }
    for (int i = first; i < argc; i++) {
        if (!is_target(argv[i])) {
            fatal("set-controller: \"%s\": a controller is tcp:IP[:PORT], "
                  "ssl:IP[:PORT] or unix:PATH", argv[i]);
        }
        json_array_append_new(targets, json_string(argv[i]));
    }
    json_decref(ctl_call("set-controller", "set-controller",
                         json_pack("{s:o}", "targets", targets)));
}

void
cmd_del_controller(int argc, char *argv[])
{
    (void) argv;
    if (argc > 2) {
        fatal("del-controller: too many arguments (expected [BRIDGE])");
    }
    json_decref(ctl_call("del-controller", "del-controller", json_object()));
}

void
cmd_get_controller(int argc, char *argv[])
{
    (void) argv;
    if (argc > 2) {
        fatal("get-controller: too many arguments (expected [BRIDGE])");
    }
    json_t *r = ctl_call("get-controller", "get-controller", json_object());
    json_t *ctls = json_object_get(r, "controllers");
    for (size_t i = 0; i < json_array_size(ctls); i++) {
        printf("%s\n", json_string_value(json_object_get(
                           json_array_get(ctls, i), "target")));
    }
    json_decref(r);
    flush("get-controller");
}

void
cmd_set_fail_mode(int argc, char *argv[])
{
    const char *mode = argc == 2 ? argv[1] : argc == 3 ? argv[2] : NULL;

    if (!mode || (strcmp(mode, "secure") && strcmp(mode, "standalone"))) {
        fatal("set-fail-mode: expected [BRIDGE] secure|standalone");
    }
    json_decref(ctl_call("set-fail-mode", "set-fail-mode",
                         json_pack("{s:s}", "mode", mode)));
}

/* show's lines about the channel: its fail mode and probe interval, the
 * listeners, each controller and each connection. */
void
ctl_show_openflow(void)
{
    json_t *r = ctl_call("show", "get-controller", json_object());
    json_t *ctls = json_object_get(r, "controllers");
    json_t *listeners = json_object_get(r, "listeners");
    json_t *conns = json_object_get(r, "connections");
    const char *mode = json_string_value(json_object_get(r, "fail_mode"));

    /* Without controllers and in the default fail mode, show says nothing
     * of the channel, as before it existed (get-controller says more). */
    if (!json_array_size(ctls) && mode && !strcmp(mode, "secure")) {
        json_decref(r);
        return;
    }
    printf("  openflow: fail_mode=%s%s, inactivity_probe=%" JSON_INTEGER_FORMAT
           "ms\n", mode, json_is_true(json_object_get(r, "fail_open_active"))
           ? " (NORMAL flow in: no controller)" : "",
           json_integer_value(json_object_get(r, "inactivity_probe_ms")));
    for (size_t i = 0; i < json_array_size(listeners); i++) {
        printf("    listening: %s\n",
               json_string_value(json_array_get(listeners, i)));
    }
    for (size_t i = 0; i < json_array_size(ctls); i++) {
        json_t *c = json_array_get(ctls, i);
        const char *err = json_string_value(json_object_get(c,
                                                            "last_error"));
        printf("    controller: %s %s%s%s\n",
               json_string_value(json_object_get(c, "target")),
               json_is_true(json_object_get(c, "is_connected"))
               ? "is_connected" : json_string_value(json_object_get(c,
                                                                    "state")),
               err && *err ? ", last error: " : "", err ? err : "");
    }
    for (size_t i = 0; i < json_array_size(conns); i++) {
        json_t *c = json_array_get(conns, i);
        printf("    connection: %s %s version=0x%02" JSON_INTEGER_FORMAT
               "x role=%s rx=%" JSON_INTEGER_FORMAT " tx=%"
               JSON_INTEGER_FORMAT " queued=%" JSON_INTEGER_FORMAT
               " async_dropped=%" JSON_INTEGER_FORMAT "\n",
               json_string_value(json_object_get(c, "name")),
               json_string_value(json_object_get(c, "state")),
               json_integer_value(json_object_get(c, "version")),
               json_string_value(json_object_get(c, "role")),
               json_integer_value(json_object_get(c, "rx")),
               json_integer_value(json_object_get(c, "tx")),
               json_integer_value(json_object_get(c, "queued_bytes")),
               json_integer_value(json_object_get(c, "async_dropped")));
    }
    json_decref(r);
}
