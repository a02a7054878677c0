/*
 * flowdp-ctl's group commands (flowdp/group.h), as ovs-ofctl's:
 *   add-group [SWITCH] GROUP
 *   add-groups [SWITCH] FILE|-        all or none
 *   [--may-create] mod-group [SWITCH] GROUP
 *   del-groups [SWITCH] [GROUP]       GROUP: group_id=N (every group if
 *                                     none); the flows that name a deleted
 *                                     group are deleted with it
 *   dump-groups [SWITCH] [GROUP]      as ovs-ofctl dump-groups prints them
 *   dump-group-stats [SWITCH] [GROUP]
 *   mod-port [SWITCH] PORT up|down    a port's state, which fast-failover
 *                                     groups watch
 * Each group text is checked here first, so that a bad one is reported
 * with where it is (FILE:LINE, column) before anything is sent.  The
 * dumps print one line per group by increasing id, each after a space as
 * ovs-ofctl prints them, without ovs-ofctl's header line (as dump-flows).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/ctl.h"
#include "utilities/tool.h"

/* The index of the first argument after an optional switch name: argv[1]
 * is one when there are more than 'max' arguments, or when it is the only
 * one and 'lone_switch' and it has no '=' (a group selector has). */
static int
skip_switch(const char *command, const char *usage, int argc, char *argv[],
            int first, int max, bool lone_switch)
{
    int n = argc - first;

    if (n > max + 1) {
        fatal("%s: too many arguments (expected %s)", command, usage);
    }
    if (n == max + 1 || (n == 1 && lone_switch && !strchr(argv[first], '=')
                         && ctl_is_switch_name(argv[first]))) {
        if (!ctl_is_switch_name(argv[first])) {
            fatal("%s: \"%s\": too many arguments, and not a switch name "
                  "(expected %s)", command, argv[first], usage);
        }
        return first + 1;
    }
    return first;
}

static void
check_group(const char *where, const char *text)
{
    struct fdp_group *g;
    char *msg = NULL;
    int error = fdp_group_parse(text, &g, &msg);

    if (error) {
        fatal("%s: %s", where, msg ? msg : strerror(error));
    }
    fdp_group_destroy(g);
}

static void
send_groups(const char *command, json_t *groups, const char *how)
{
    json_decref(ctl_call(command, "add-groups",
                         json_pack("{s:o, s:s}", "groups", groups, "command",
                                   how)));
}

void
cmd_add_group(int argc, char *argv[])
{
    int i = skip_switch("add-group", "[SWITCH] GROUP", argc, argv, 1, 1,
                        false);

    if (argc - i != 1) {
        fatal("add-group: expected one GROUP");
    }
    check_group("add-group", argv[i]);
    send_groups("add-group", json_pack("[s]", argv[i]), "add");
}

struct file_groups {
    const char *command;
    json_t *groups;
};

static void
file_group_line(const char *shown, unsigned long line_no, char *line,
                void *fg_)
{
    struct file_groups *fg = fg_;
    char where[512];

    snprintf(where, sizeof where, "%s: %s:%lu", fg->command, shown, line_no);
    check_group(where, line);
    json_array_append_new(fg->groups, json_string(line));
}

void
cmd_add_groups(int argc, char *argv[])
{
    int i = skip_switch("add-groups", "[SWITCH] FILE", argc, argv, 1, 1,
                        false);
    struct file_groups fg = { "add-groups", json_array() };

    if (argc - i != 1) {
        fatal("add-groups: expected FILE (or - for stdin)");
    }
    if (!fg.groups) {
        fatal("out of memory");
    }
    for_each_line(argv[i], file_group_line, &fg);
    send_groups("add-groups", fg.groups, "add");
}

void
cmd_mod_group(int argc, char *argv[])
{
    bool may_create = false;
    int i = 1;

    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--may-create")) {
            may_create = true;
        } else {
            fatal("mod-group: %s: unknown option (the only one is "
                  "--may-create)", argv[i]);
        }
    }
    i = skip_switch("mod-group", "[--may-create] [SWITCH] GROUP", argc, argv,
                    i, 1, false);
    if (argc - i != 1) {
        fatal("mod-group: expected one GROUP");
    }
    check_group("mod-group", argv[i]);
    send_groups("mod-group", json_pack("[s]", argv[i]),
                may_create ? "add_or_mod" : "modify");
}

/* The optional GROUP selector of del-groups and the dumps, checked. */
static json_t *
selector_params(const char *command, int argc, char *argv[])
{
    int i = skip_switch(command, "[SWITCH] [GROUP]", argc, argv, 1, 1, true);
    json_t *params = json_object();

    if (!params) {
        fatal("out of memory");
    }
    if (argc - i == 1) {
        uint32_t id;
        char *msg = NULL;
        if (fdp_group_parse_id(argv[i], &id, &msg)) {
            fatal("%s: %s", command, msg ? msg : "out of memory");
        }
        json_object_set_new(params, "group", json_string(argv[i]));
    }
    return params;
}

void
cmd_del_groups(int argc, char *argv[])
{
    json_decref(ctl_call("del-groups", "del-groups",
                         selector_params("del-groups", argc, argv)));
}

static void
dump(const char *command, int argc, char *argv[], bool stats)
{
    json_t *params = selector_params(command, argc, argv);

    json_object_set_new(params, "stats", json_boolean(stats));
    json_t *r = ctl_call(command, "dump-groups", params);
    const json_t *groups = json_object_get(r, "groups");
    if (!json_is_array(groups)) {
        fatal("%s: the daemon's reply has no groups", command);
    }
    for (size_t i = 0; i < json_array_size(groups); i++) {
        const char *text = json_string_value(json_array_get(groups, i));
        printf(" %s\n", text ? text : "");
    }
    json_decref(r);
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

void
cmd_dump_groups(int argc, char *argv[])
{
    dump("dump-groups", argc, argv, false);
}

void
cmd_dump_group_stats(int argc, char *argv[])
{
    dump("dump-group-stats", argc, argv, true);
}

void
cmd_mod_port(int argc, char *argv[])
{
    int i = skip_switch("mod-port", "[SWITCH] PORT up|down", argc, argv, 1,
                        2, false);

    if (argc - i != 2) {
        fatal("mod-port: expected PORT up|down");
    }
    uint32_t port = (uint32_t) parse_u64(argv[i], 0xfeff, "mod-port");
    const char *state = argv[i + 1];
    if (strcmp(state, "up") && strcmp(state, "down")) {
        fatal("mod-port: \"%s\": expected up or down", state);
    }
    json_decref(ctl_call("mod-port", "mod-port",
                         json_pack("{s:i, s:s}", "port", (int) port, "state",
                                   state)));
}
