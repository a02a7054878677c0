/*
 * flowdp-ctl's connection-tracker commands: "ovs-appctl dpctl/..."'s
 * conntrack commands, with their arguments and their output, over
 * flowdpd's methods of the same names (utilities/flowdpd-ct.c).  Every
 * argument is checked here first, so that a mistake names its argument
 * before anything is sent; the daemon checks again.
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

/* "zone=N" with N from 0 to 65535, naming 'command' if malformed. */
static bool
is_zone_arg(const char *arg)
{
    return !strncmp(arg, "zone=", 5);
}

static uint16_t
parse_zone(const char *command, const char *value)
{
    char *what = xasprintf("%s: zone", command);

    if (!what) {
        fatal("out of memory");
    }
    uint16_t zone = (uint16_t) parse_u64(value, UINT16_MAX, what);
    free(what);
    return zone;
}

static int
compare_lines(const void *a_, const void *b_)
{
    const char *const *a = a_, *const *b = b_;

    return strcmp(*a, *b);
}

void
ctl_print_sorted_lines(char *text)
{
    size_t n = 0, alloc = 0;
    char **lines = NULL;
    char *save = NULL;

    for (char *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        if (n == alloc) {
            alloc = alloc ? 2 * alloc : 64;
            lines = realloc(lines, alloc * sizeof *lines);
            if (!lines) {
                fatal("out of memory");
            }
        }
        lines[n++] = l;
    }
    if (n) {
        qsort(lines, n, sizeof *lines, compare_lines);
    }
    for (size_t i = 0; i < n; i++) {
        puts(lines[i]);
    }
    free(lines);
}

static void
done(const char *command)
{
    if (fflush(stdout) || ferror(stdout)) {
        fatal("%s: write error: %s", command, strerror(errno));
    }
}

/* The lines of a dump, part by part. */
struct text_acc {
    char *s;
    size_t len, alloc;
};

/* Appends the "text" of a part (or of the reply) to 'acc_'. */
static int
take_text_part(const json_t *params, void *acc_)
{
    struct text_acc *acc = acc_;
    const json_t *t = json_object_get(params, "text");

    if (!json_is_string(t)) {
        return EPROTO;
    }
    size_t n = json_string_length(t);
    if (acc->len + n + 1 > acc->alloc) {
        acc->alloc = 2 * (acc->len + n + 1);
        acc->s = realloc(acc->s, acc->alloc);
        if (!acc->s) {
            fatal("out of memory");
        }
    }
    memcpy(acc->s + acc->len, json_string_value(t), n);
    acc->len += n;
    acc->s[acc->len] = '\0';
    return 0;
}

/* dump-conntrack [-m] [-s] [zone=N] */
void
cmd_dump_conntrack(int argc, char *argv[])
{
    bool verbose = false, stats = false;
    json_t *params = json_object();
    int i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--more")) {
            verbose = true;
        } else if (!strcmp(argv[i], "-s")
                   || !strcmp(argv[i], "--statistics")) {
            stats = true;
        } else {
            fatal("dump-conntrack: unknown option %s (expected -m or -s)",
                  argv[i]);
        }
    }
    if (i < argc && is_zone_arg(argv[i])) {
        json_object_set_new(params, "zone",
                            json_integer(parse_zone("dump-conntrack",
                                                    argv[i] + 5)));
        i++;
    }
    if (i != argc) {
        fatal("dump-conntrack: unexpected argument \"%s\" (expected [-m] "
              "[-s] [zone=N])", argv[i]);
    }
    json_object_set_new(params, "verbose", json_boolean(verbose));
    json_object_set_new(params, "stats", json_boolean(stats));
    json_object_set_new(params, "parts", json_true());
    struct text_acc acc = { NULL, 0, 0 };
    json_t *r = ctl_call_parts("dump-conntrack", "dump-conntrack", params,
                               take_text_part, &acc);
    if (take_text_part(r, &acc)) {
        fatal("dump-conntrack: the daemon's reply has no text");
    }
    json_decref(r);
    ctl_print_sorted_lines(acc.s ? acc.s : (char []) { '\0' });
    free(acc.s);
    done("dump-conntrack");
}

/* flush-conntrack [zone=N] [ORIG-TUPLE [REPLY-TUPLE]] */
void
cmd_flush_conntrack(int argc, char *argv[])
{
    json_t *params = json_object();
    struct fdp_ct_match match;
    int i = 1;

    memset(&match, 0, sizeof match);
    if (i < argc && is_zone_arg(argv[i])) {
        json_object_set_new(params, "zone",
                            json_integer(parse_zone("flush-conntrack",
                                                    argv[i] + 5)));
        i++;
    }
    for (int t = 0; t < 2 && i < argc; t++, i++) {
        char *msg = NULL;
        if (argv[i][0]
            && fdp_ct_match_parse_tuple(argv[i], t, &match, &msg)) {
            fatal("flush-conntrack: %s tuple \"%s\": %s",
                  t ? "reply" : "original", argv[i],
                  msg ? msg : "out of memory");
        }
        json_object_set_new(params, t ? "reply" : "orig",
                            json_string(argv[i]));
    }
    if (i != argc) {
        fatal("flush-conntrack: unexpected argument \"%s\" (expected "
              "[zone=N] [ct-orig-tuple [ct-reply-tuple]])", argv[i]);
    }
    json_decref(ctl_call("flush-conntrack", "flush-conntrack", params));
}

static uint64_t
get_count(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);

    return json_is_integer(v) && json_integer_value(v) >= 0
           ? (uint64_t) json_integer_value(v) : 0;
}

/* ct-stats-show [-m] [-s] [zone=N]: dpctl's text; -s adds the pmds'
 * packet counters, which dpctl has no line for. */
void
cmd_ct_stats_show(int argc, char *argv[])
{
    static const struct {
        const char *key, *title;
    } protos[] = {
        { "udp", "UDP" }, { "udplite", "UDPLITE" }, { "sctp", "SCTP" },
        { "icmp", "ICMP" }, { "dccp", "DCCP" }, { "igmp", "IGMP" },
        { "other", "Other" },
    };
    bool verbose = false, counters = false;
    json_t *params = json_object();
    int i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-m") || !strcmp(argv[i], "--more")) {
            verbose = true;
        } else if (!strcmp(argv[i], "-s")
                   || !strcmp(argv[i], "--statistics")) {
            counters = true;
        } else {
            fatal("ct-stats-show: unknown option %s (expected -m or -s)",
                  argv[i]);
        }
    }
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "verbose")) {
            verbose = true;     /* As dpctl, for backward compatibility. */
        } else if (is_zone_arg(argv[i])) {
            json_object_set_new(params, "zone",
                                json_integer(parse_zone("ct-stats-show",
                                                        argv[i] + 5)));
        } else {
            fatal("ct-stats-show: unexpected argument \"%s\" (expected "
                  "[-m] [-s] [zone=N])", argv[i]);
        }
    }
    json_t *r = ctl_call("ct-stats-show", "ct-stats-show", params);
    /* ICMPv6 connections count in the total only, as dpctl prints no
     * line for them. */
    printf("Connections Stats:\n    Total: %" PRIu64 "\n",
           get_count(r, "total"));
    if (get_count(r, "tcp")) {
        printf("  TCP: %" PRIu64 "\n", get_count(r, "tcp"));
        if (verbose) {
            printf("    Conn per TCP states:\n");
            for (unsigned int s = 0; fdp_ct_tcp_state_name(s); s++) {
                const char *name = fdp_ct_tcp_state_name(s);
                uint64_t n = get_count(json_object_get(r, "tcp_states"),
                                       name);
                if (n) {
                    printf("\t  [%s]=%" PRIu64 "\n", name, n);
                }
            }
        }
    }
    for (size_t p = 0; p < sizeof protos / sizeof protos[0]; p++) {
        if (get_count(r, protos[p].key)) {
            printf("  %s: %" PRIu64 "\n", protos[p].title,
                   get_count(r, protos[p].key));
        }
    }
    if (counters) {
        printf("Packets: %" PRIu64 ", committed: %" PRIu64 ", invalid: %"
               PRIu64 ", refused (full): %" PRIu64 "\n",
               get_count(r, "packets"), get_count(r, "created"),
               get_count(r, "invalid"), get_count(r, "full"));
    }
    json_decref(r);
    done("ct-stats-show");
}

static void
no_args(const char *command, int argc, char *argv[])
{
    if (argc > 1) {
        fatal("%s: unexpected argument \"%s\" (it takes none)", command,
              argv[1]);
    }
}

void
cmd_ct_get_nconns(int argc, char *argv[])
{
    no_args("ct-get-nconns", argc, argv);
    json_t *r = ctl_call("ct-get-nconns", "ct-get-nconns", json_object());
    printf("%" PRIu64 "\n", get_count(r, "n"));
    json_decref(r);
    done("ct-get-nconns");
}

void
cmd_ct_set_maxconns(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("ct-set-maxconns: expected MAXCONNS (a number of "
              "connections)");
    }
    uint64_t v = parse_u64(argv[1], UINT32_MAX, "ct-set-maxconns: maxconns");
    if (!v) {
        fatal("ct-set-maxconns: maxconns: must be at least 1");
    }
    json_decref(ctl_call("ct-set-maxconns", "ct-set-maxconns",
                         json_pack("{s:I}", "maxconns", (json_int_t) v)));
    printf("setting maxconns successful\n");
    done("ct-set-maxconns");
}

void
cmd_ct_get_maxconns(int argc, char *argv[])
{
    no_args("ct-get-maxconns", argc, argv);
    json_t *r = ctl_call("ct-get-maxconns", "ct-get-maxconns",
                         json_object());
    printf("%" PRIu64 "\n", get_count(r, "maxconns"));
    json_decref(r);
    done("ct-get-maxconns");
}

/* "zone=N,limit=L" (either order), as ct_dpif_parse_zone_limit_tuple(). */
static json_t *
parse_zone_limit(const char *arg)
{
    char *copy = strdup(arg), *save = NULL;
    bool have_zone = false, have_limit = false;
    uint64_t zone = 0, limit = 0;

    if (!copy) {
        fatal("out of memory");
    }
    for (char *f = strtok_r(copy, ",", &save); f;
         f = strtok_r(NULL, ",", &save)) {
        char *v = strchr(f, '=');
        if (!v || !v[1]) {
            fatal("ct-set-limits: \"%s\": field %s missing value", arg, f);
        }
        *v++ = '\0';
        if (!strcmp(f, "zone")) {
            zone = parse_u64(v, UINT16_MAX, "ct-set-limits: zone");
            have_zone = true;
        } else if (!strcmp(f, "limit")) {
            limit = parse_u64(v, UINT32_MAX, "ct-set-limits: limit");
            have_limit = true;
        } else {
            fatal("ct-set-limits: \"%s\": invalid zone limit field: %s",
                  arg, f);
        }
    }
    free(copy);
    if (!have_zone || !have_limit) {
        fatal("ct-set-limits: \"%s\": failed to parse zone limit (expected "
              "zone=N,limit=L)", arg);
    }
    return json_pack("{s:I, s:I}", "zone", (json_int_t) zone, "limit",
                     (json_int_t) limit);
}

/* ct-set-limits [default=L] [zone=N,limit=L]... */
void
cmd_ct_set_limits(int argc, char *argv[])
{
    json_t *params = json_object();
    json_t *zones = json_array();
    int i = 1;

    if (argc < 2) {
        fatal("ct-set-limits: expected [default=L] [zone=N,limit=L]...");
    }
    if (!strncmp(argv[i], "default=", 8)) {
        json_object_set_new(params, "default", json_integer(
            (json_int_t) parse_u64(argv[i] + 8, UINT32_MAX,
                                   "ct-set-limits: default")));
        i++;
    }
    for (; i < argc; i++) {
        json_array_append_new(zones, parse_zone_limit(argv[i]));
    }
    json_object_set_new(params, "zones", zones);
    json_decref(ctl_call("ct-set-limits", "ct-set-limits", params));
}

/* "zone=N1[,N2]...", as dpctl's parse_ct_limit_zones(). */
static json_t *
parse_zone_list(const char *command, const char *arg)
{
    json_t *zones = json_array();
    char *copy, *save = NULL;

    if (strncmp(arg, "zone=", 5)) {
        fatal("%s: invalid argument %s (expected zone=N1[,N2]...)", command,
              arg);
    }
    copy = strdup(arg + 5);
    if (!copy) {
        fatal("out of memory");
    }
    for (char *z = strtok_r(copy, ",", &save); z;
         z = strtok_r(NULL, ",", &save)) {
        json_array_append_new(zones, json_integer(parse_zone(command, z)));
    }
    free(copy);
    if (!json_array_size(zones)) {
        fatal("%s: %s: invalid zone (expected zone=N1[,N2]...)", command,
              arg);
    }
    return zones;
}

void
cmd_ct_del_limits(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("ct-del-limits: expected zone=N1[,N2]...");
    }
    json_decref(ctl_call("ct-del-limits", "ct-del-limits",
                         json_pack("{s:o}", "zones",
                                   parse_zone_list("ct-del-limits",
                                                   argv[1]))));
}

/* ct-get-limits [zone=N1[,N2]...]: dpctl's ct_dpif_format_zone_limits(). */
void
cmd_ct_get_limits(int argc, char *argv[])
{
    json_t *params = json_object();

    if (argc > 2) {
        fatal("ct-get-limits: unexpected argument \"%s\" (expected "
              "[zone=N1[,N2]...])", argv[2]);
    }
    if (argc == 2) {
        json_object_set_new(params, "zones",
                            parse_zone_list("ct-get-limits", argv[1]));
    }
    json_t *r = ctl_call("ct-get-limits", "ct-get-limits", params);
    printf("default limit=%" PRIu64 "\n", get_count(r, "default"));
    const json_t *zones = json_object_get(r, "zones");
    for (size_t i = 0; i < json_array_size(zones); i++) {
        const json_t *z = json_array_get(zones, i);
        printf("zone=%" PRIu64 ",limit=%" PRIu64 ",count=%" PRIu64 "\n",
               get_count(z, "zone"), get_count(z, "limit"),
               get_count(z, "count"));
    }
    json_decref(r);
    done("ct-get-limits");
}

/* ct-set-timeout-policy [zone=N] NAME=SECONDS... */
void
cmd_ct_set_timeout_policy(int argc, char *argv[])
{
    json_t *params = json_object();
    json_t *timeouts = json_object();
    int i = 1;

    if (i < argc && is_zone_arg(argv[i])) {
        json_object_set_new(params, "zone",
                            json_integer(parse_zone("ct-set-timeout-policy",
                                                    argv[i] + 5)));
        i++;
    }
    if (i >= argc) {
        fatal("ct-set-timeout-policy: expected [zone=N] NAME=SECONDS... "
              "(e.g. tcp_established=3600)");
    }
    for (; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char *name = eq ? strndup(argv[i], (size_t) (eq - argv[i])) : NULL;
        if (!eq) {
            fatal("ct-set-timeout-policy: \"%s\": expected NAME=SECONDS",
                  argv[i]);
        }
        if (!name) {
            fatal("out of memory");
        }
        if (fdp_ct_tp_attr_from_name(name) == FDP_CT_N_TP_ATTRS) {
            fatal("ct-set-timeout-policy: %s: unknown timeout (the "
                  "userspace tracker has tcp_syn_sent, tcp_syn_recv, "
                  "tcp_established, tcp_fin_wait, tcp_time_wait, "
                  "tcp_close, udp_first, udp_single, udp_multiple, "
                  "icmp_first, icmp_reply)", name);
        }
        char *what = xasprintf("ct-set-timeout-policy: %s", name);
        if (!what) {
            fatal("out of memory");
        }
        uint64_t v = parse_u64(eq + 1, 2147483, what);
        if (!v) {
            fatal("%s: must be at least 1 second", what);
        }
        free(what);
        json_object_set_new(timeouts, name, json_integer((json_int_t) v));
        free(name);
    }
    json_object_set_new(params, "timeouts", timeouts);
    json_decref(ctl_call("ct-set-timeout-policy", "ct-set-timeout-policy",
                         params));
}

void
cmd_ct_del_timeout_policy(int argc, char *argv[])
{
    if (argc != 2 || !is_zone_arg(argv[1])) {
        fatal("ct-del-timeout-policy: expected zone=N");
    }
    json_decref(ctl_call("ct-del-timeout-policy", "ct-del-timeout-policy",
                         json_pack("{s:i}", "zone",
                                   (int) parse_zone("ct-del-timeout-policy",
                                                    argv[1] + 5))));
}

/* ct-get-timeout-policy [zone=N]: NAME=SECONDS, one a line, in Open
 * vSwitch's order; with a zone, those the zone does not set itself are
 * marked "(global)". */
void
cmd_ct_get_timeout_policy(int argc, char *argv[])
{
    json_t *params = json_object();
    bool zoned = false;

    if (argc > 2 || (argc == 2 && !is_zone_arg(argv[1]))) {
        fatal("ct-get-timeout-policy: unexpected argument \"%s\" (expected "
              "[zone=N])", argv[argc - 1]);
    }
    if (argc == 2) {
        json_object_set_new(params, "zone",
                            json_integer(parse_zone("ct-get-timeout-policy",
                                                    argv[1] + 5)));
        zoned = true;
    }
    json_t *r = ctl_call("ct-get-timeout-policy", "ct-get-timeout-policy",
                         params);
    const json_t *t = json_object_get(r, "timeouts");
    const json_t *own = json_object_get(r, "own");
    for (int a = 0; a < FDP_CT_N_TP_ATTRS; a++) {
        const char *name = fdp_ct_tp_attr_name((enum fdp_ct_tp_attr) a);
        bool is_own = false;
        for (size_t i = 0; i < json_array_size(own); i++) {
            const char *o = json_string_value(json_array_get(own, i));
            is_own = is_own || (o && !strcmp(o, name));
        }
        printf("%s=%" PRIu64 "%s\n", name, get_count(t, name),
               zoned && !is_own ? " (global)" : "");
    }
    json_decref(r);
    done("ct-get-timeout-policy");
}

static void
set_tcp_seq_chk(const char *command, bool on, int argc, char *argv[])
{
    no_args(command, argc, argv);
    json_decref(ctl_call(command, "ct-set-tcp-seq-chk",
                         json_pack("{s:b}", "enabled", on)));
    printf("%s TCP sequence checking successful\n",
           on ? "enabling" : "disabling");
    done(command);
}

void
cmd_ct_enable_tcp_seq_chk(int argc, char *argv[])
{
    set_tcp_seq_chk("ct-enable-tcp-seq-chk", true, argc, argv);
}

void
cmd_ct_disable_tcp_seq_chk(int argc, char *argv[])
{
    set_tcp_seq_chk("ct-disable-tcp-seq-chk", false, argc, argv);
}

void
cmd_ct_get_tcp_seq_chk(int argc, char *argv[])
{
    no_args("ct-get-tcp-seq-chk", argc, argv);
    json_t *r = ctl_call("ct-get-tcp-seq-chk", "ct-get-tcp-seq-chk",
                         json_object());
    printf("TCP sequence checking: %s\n",
           json_is_true(json_object_get(r, "enabled")) ? "enabled"
                                                       : "disabled");
    json_decref(r);
    done("ct-get-tcp-seq-chk");
}
