/*
 * flowdp-ctl's TLV map commands: ovs-ofctl's add-tlv-map, del-tlv-map and
 * dump-tlv-map, with their arguments and output (as "ovs-ofctl -O
 * OpenFlow13" prints them), over flowdpd's methods of the same names
 * (utilities/flowdpd-tlv.c).  As with ovs-ofctl, a SWITCH argument may
 * come first (any name: flowdpd has one datapath).  The map text is
 * checked here first, on a scratch map, so that a mistake is named before
 * anything is sent; the daemon checks it against its own map.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flowdp.h>
#include "utilities/ctl.h"
#include "utilities/tool.h"

/* The map argument of "COMMAND [SWITCH] [MAP]": NULL if none (and
 * 'optional'); exits naming 'command' on a wrong count.  A map always
 * starts with '{', which no switch name does. */
static const char *
map_arg(const char *command, int argc, char *argv[], bool optional)
{
    int first = 1;

    if (argc > first && argv[first][0] != '{') {
        first++;
    }
    if (argc - first > 1) {
        fatal("%s: too many arguments (expected [SWITCH] %s)", command,
              optional ? "[MAP]" : "MAP");
    }
    if (argc == first) {
        if (!optional) {
            fatal("%s: expected [SWITCH] {class=C,type=T,len=L}->"
                  "tun_metadataN[,...]", command);
        }
        return NULL;
    }
    return argv[first];
}

/* Checks 'text' on an empty map: all of it for an addition, only its
 * syntax, lengths and indexes for a deletion (what the daemon's map holds
 * is the daemon's to check). */
static void
check_map(const char *command, const char *text, bool add)
{
    struct fdp_tlv_map *map;
    char *msg = NULL;

    if (fdp_tlv_map_create(&map)) {
        fatal("%s: out of memory", command);
    }
    int error = fdp_tlv_map_add(map, text, &msg);
    bool syntax = msg && (strstr(msg, "invalid tlv mapping")
                          || strstr(msg, "len=")
                          || strstr(msg, "index is at most")
                          || strstr(msg, "more than"));
    if (error && (add || syntax)) {
        fatal("%s: %s", command, msg ? msg : strerror(error));
    }
    free(msg);
    fdp_tlv_map_destroy(map);
}

static void
change(const char *command, bool add, int argc, char *argv[])
{
    const char *text = map_arg(command, argc, argv, !add);

    if (text) {
        check_map(command, text, add);
    }
    json_t *params = text ? json_pack("{s:s}", "map", text) : json_object();
    json_decref(ctl_call(command, command, params));
}

void
cmd_add_tlv_map(int argc, char *argv[])
{
    change("add-tlv-map", true, argc, argv);
}

void
cmd_del_tlv_map(int argc, char *argv[])
{
    change("del-tlv-map", false, argc, argv);
}

void
cmd_dump_tlv_map(int argc, char *argv[])
{
    if (argc > 2) {
        fatal("dump-tlv-map: too many arguments (expected [SWITCH])");
    }
    json_t *r = ctl_call("dump-tlv-map", "dump-tlv-map", json_object());
    const char *body = json_string_value(json_object_get(r, "text"));
    if (!body) {
        fatal("dump-tlv-map: the daemon's reply has no text");
    }
    printf("NXT_TLV_TABLE_REPLY (OF1.3) (xid=0x2):\n%s", body);
    json_decref(r);
    if (fflush(stdout) || ferror(stdout)) {
        fatal("dump-tlv-map: write error: %s", strerror(errno));
    }
}

void
ctl_load_tlv_map(const char *file)
{
    FILE *f = fopen(file, "r");
    struct fdp_tlv_map *map;
    char line[4096];
    int n = 0;

    if (!f) {
        fatal("--tlv-map: %s: %s", file, strerror(errno));
    }
    if (fdp_tlv_map_create(&map)) {
        fatal("--tlv-map: out of memory");
    }
    while (fgets(line, sizeof line, f)) {
        n++;
        line[strcspn(line, "#\r\n")] = '\0';
        /* Leading and trailing blanks apart, a line is add-tlv-map's
         * text. */
        char *s = line + strspn(line, " \t");
        size_t len = strlen(s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) {
            s[--len] = '\0';
        }
        char *msg = NULL;
        if (*s && fdp_tlv_map_add(map, s, &msg)) {
            fatal("--tlv-map: %s:%d: %s", file, n, msg ? msg : "invalid");
        }
        free(msg);
    }
    if (ferror(f)) {
        fatal("--tlv-map: %s: read error", file);
    }
    fclose(f);
    /* The map lives as long as the program. */
    fdp_tlv_map_use_for_text(map);
}
