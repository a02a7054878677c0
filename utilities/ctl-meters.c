/*
 * flowdp-ctl's meter commands: ovs-ofctl's add-meter, mod-meter,
 * del-meters, dump-meters, meter-stats and meter-features, with their
 * arguments and their output (as "ovs-ofctl -O OpenFlow13" prints them),
 * over flowdpd's methods of the same names (utilities/flowdpd-meters.c).
 * As with ovs-ofctl, a SWITCH argument may come first (any name: flowdpd
 * has one datapath).  The meter text is checked here first, so that a
 * mistake is named before anything is sent; the daemon checks again.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "utilities/ctl.h"
#include "utilities/tool.h"

/* The meter argument of "COMMAND [SWITCH] [METER]": NULL if none (and
 * 'optional'); exits naming 'command' on a wrong count. */
static const char *
meter_arg(const char *command, int argc, char *argv[], bool optional)
{
    int first = 1;

    /* "COMMAND SWITCH METER", or "COMMAND SWITCH" for an optional meter
     * (a meter's text always holds '=', which no switch name does). */
    if (argc > first && ctl_is_switch_name(argv[first])
        && (argc == first + 2 || (optional && argc == first + 1))) {
        first++;
    }
    if (argc - first > 1) {
        fatal("%s: too many arguments (expected [SWITCH] %s)", command,
              optional ? "[METER]" : "METER");
    }
    if (argc - first == 0) {
        if (!optional) {
            fatal("%s: expected [SWITCH] METER (meter=N,kbps|pktps,"
                  "bands=type=drop,rate=R...)", command);
        }
        return NULL;
    }
    return argv[first];
}

/* Checks 'text' as 'cmd' needs it, exiting with the parser's message. */
static void
check_meter(const char *command, const char *text, enum fdp_meter_command cmd)
{
    struct fdp_meter_config c;
    char *msg = NULL;

    if (fdp_meter_parse(text, cmd, &c, &msg)) {
        fatal("%s: %s", command, msg ? msg : "invalid meter");
    }
    free(msg);
}

static json_t *
meter_params(const char *text)
{
    return text ? json_pack("{s:s}", "meter", text) : json_object();
}

static void
flush_stdout(const char *command)
{
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

/* add-meter and mod-meter. */
static void
change(const char *command, enum fdp_meter_command cmd, int argc,
       char *argv[])
{
    const char *text = meter_arg(command, argc, argv, false);

    check_meter(command, text, cmd);
    json_decref(ctl_call(command, command, meter_params(text)));
}

void
cmd_add_meter(int argc, char *argv[])
{
    change("add-meter", FDP_METER_CMD_ADD, argc, argv);
}

void
cmd_mod_meter(int argc, char *argv[])
{
    change("mod-meter", FDP_METER_CMD_MOD, argc, argv);
}

void
cmd_del_meters(int argc, char *argv[])
{
    const char *text = meter_arg("del-meters", argc, argv, true);

    if (text) {
        check_meter("del-meters", text, FDP_METER_CMD_DEL);
    }
    json_decref(ctl_call("del-meters", "del-meters", meter_params(text)));
}

/* dump-meters and meter-stats: the reply's header line, then each
 * meter's text after a new line, as ovs-ofctl prints a multipart reply. */
static void
dump(const char *command, const char *header, int argc, char *argv[])
{
    const char *text = meter_arg(command, argc, argv, true);

    if (text) {
        check_meter(command, text, FDP_METER_CMD_DUMP);
    }
    json_t *r = ctl_call(command, command, meter_params(text));
    const char *body = json_string_value(json_object_get(r, "text"));
    if (!body) {
        fatal("%s: the daemon's reply has no text", command);
    }
    printf("%s (OF1.3) (xid=0x2):%s", header, body);
    if (!*body || body[strlen(body) - 1] != '\n') {
        putchar('\n');
    }
    json_decref(r);
    flush_stdout(command);
}

void
cmd_dump_meters(int argc, char *argv[])
{
    dump("dump-meters", "OFPST_METER_CONFIG reply", argc, argv);
}

void
cmd_meter_stats(int argc, char *argv[])
{
    dump("meter-stats", "OFPST_METER reply", argc, argv);
}

void
cmd_meter_features(int argc, char *argv[])
{
    if (argc > 2 || (argc == 2 && !ctl_is_switch_name(argv[1]))) {
        fatal("meter-features: too many arguments (expected [SWITCH])");
    }
    json_t *r = ctl_call("meter-features", "meter-features", json_object());
    const char *body = json_string_value(json_object_get(r, "text"));
    if (!body) {
        fatal("meter-features: the daemon's reply has no text");
    }
    printf("OFPST_METER_FEATURES reply (OF1.3) (xid=0x2):\n%s", body);
    json_decref(r);
    flush_stdout("meter-features");
}
