/*
 * flowdp-bench openflow suite: the OpenFlow channel as its users drive it,
 * flowdpd against ovs-vswitchd.
 *
 * Theory of operation.  Both switches are real daemons, programmed by the
 * real client: Debian's ovs-ofctl (OpenFlow 1.5).  The suite writes one
 * generated flow file (FLOWS flows, 200,000; 5,000 with --quick) and
 * times, as wall clock around the ovs-ofctl process:
 *
 *   bundle-add   "ovs-ofctl -O OpenFlow15 --bundle add-flows SWITCH FILE"
 *                into an empty switch: every flow in one atomic bundle,
 *                ns_per_op per flow;
 *   dump-flows   "ovs-ofctl -O OpenFlow15 dump-flows SWITCH" of them all
 *                (its output checked to hold FLOWS flows), per flow.
 *
 * impl "flowdpd" is flowdpd (found beside this program in a build tree,
 * utilities/flowdpd, else on PATH) listening on --openflow=punix:DIR/
 * flowdpd.mgmt; impl "ovs-vswitchd" is ovs-vswitchd --enable-dummy
 * started by the tests' own tests/ovs-peer.sh (found above the current
 * directory or this program, or in $FLOWDP_SRCDIR), its bridge opened to
 * OpenFlow 1.5.  Everything runs in a private temporary directory removed
 * at the end, daemons stopped by their pidfiles.  Without ovs-vswitchd
 * (or the script) the suite reports flowdpd alone and says why on stderr;
 * with a flowdpd that has no OpenFlow channel (its --help names no
 * --openflow) it reports Open vSwitch alone and says so.
 *
 * impl "client-floor" is the same two commands into a stub switch that
 * does no work (bench-openflow-floor.c): ovs-ofctl's own time, which is
 * part of every switch's figure.
 *
 * The goal (issue 26): each case at least 5 times faster into flowdpd
 * than into ovs-vswitchd in the same run; with both sides the suite adds
 * a case "CASE-speedup" (impl "ratio", ns_per_op the ratio of ovs-vswitchd's
 * time to flowdpd's, entries FLOWS), and with the floor and ovs-vswitchd
 * "CASE-max-speedup" (ovs-vswitchd's time over the floor: the ratio a
 * switch that took no time at all would reach; below 5 the goal cannot be
 * met by any switch driven by this client).
 *
 * The flows are what controllers write (the tests' Antrea- and OVN-like
 * programs at scale): 10 tables; matches on in_port, MAC addresses,
 * IPv4 and IPv6 prefixes, transport ports, registers and metadata;
 * priorities from a few levels and spread values; actions that output,
 * load registers, rewrite MACs, decrement the TTL, commit to conntrack,
 * resubmit and go to a later table.  A fixed seed, so every run and both
 * switches get the same file; every flow distinct (gen_flow()).
 *
 * Then the packet-in cases, flowdpd only (Open vSwitch's dummy ports
 * cannot be fed fast enough to compare), where flowdpd has --controller:
 * bench-openflow-pktin.c.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "tests/lib/rng.h"

extern char **environ;

#define FLOWS_FULL 200000
#define FLOWS_QUICK 5000
/* The generator's seed: any fixed value, so that runs compare. */
#define FLOW_SEED 0x26

/* Wall-clock nanoseconds (the work is in other processes: the benchmark
 * thread's CPU clock would see none of it). */
static double
wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* Finding the programs.                                                   */

/* The directory of this executable, in 'buf' ('size' bytes); false if
 * unknown. */
static bool
exe_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);

    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash) {
        return false;
    }
    *slash = '\0';
    return true;
}

/* The nearest 'dir'/REL, 'dir' being 'start' or one of its parents, as a
 * string to free(), or NULL. */
static char *
find_upwards(const char *start, const char *rel)
{
    char dir[PATH_MAX];

    if (snprintf(dir, sizeof dir, "%s", start) >= (int) sizeof dir) {
        return NULL;
    }
    for (;;) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, rel);
        if (access(path, R_OK) == 0) {
            return strdup(path);
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) {
            return NULL;
        }
        *slash = '\0';
    }
}

/* tests/ovs-peer.sh: in $FLOWDP_SRCDIR, else above the current directory
 * or this executable (a build tree inside or beside the checkout). */
static char *
find_peer_script(void)
{
    const char *src = getenv("FLOWDP_SRCDIR");
    char buf[PATH_MAX];
    char *p;

    if (src && *src) {
        return find_upwards(src, "tests/ovs-peer.sh");
    }
    if (getcwd(buf, sizeof buf) && (p = find_upwards(buf,
                                                     "tests/ovs-peer.sh"))) {
        return p;
    }
    return exe_dir(buf, sizeof buf) ? find_upwards(buf, "tests/ovs-peer.sh")
                                     : NULL;
}

/* flowdpd: utilities/flowdpd of the build tree this program is in, else
 * "flowdpd" (from PATH). */
static char *
find_flowdpd(void)
{
    char buf[PATH_MAX];

    if (exe_dir(buf, sizeof buf)) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/../utilities/flowdpd", buf);
        if (access(path, X_OK) == 0) {
            return strdup(path);
        }
    }
    return strdup("flowdpd");
}

/* ---------------------------------------------------------------------- */
/* Running programs.                                                       */

/* Runs 'argv' with stdout to 'out' (a file, or NULL for /dev/null) and
 * stderr to 'err' (likewise), waits, and returns its exit status (or -1
 * with errno set if it could not start); '*ns' is the wall time. */
static int
run(char *const argv[], const char *out, const char *err, double *ns)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err ? err : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    double t0 = wall_ns();
    int error = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (error) {
        errno = error;
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    if (ns) {
        *ns = wall_ns() - t0;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs the bash script 'script' and returns its first line of output (to
 * free(), newline removed), or NULL if it failed. */
static char *
bash_line(const char *script)
{
    char *argv[] = { "bash", "-c", (char *) script, NULL };
    char out[] = "/tmp/flowdp-bench-of-out.XXXXXX";
    int fd = mkstemp(out);

    if (fd < 0) {
        return NULL;
    }
    close(fd);
    int rc = run(argv, out, NULL, NULL);
    char *line = NULL;
    FILE *f = fopen(out, "r");
    if (f) {
        char buf[PATH_MAX];
        if (rc == 0 && fgets(buf, sizeof buf, f)) {
            buf[strcspn(buf, "\n")] = '\0';
            line = strdup(buf);
        }
        fclose(f);
    }
    unlink(out);
    return line;
}

/* Copies the first lines of file 'path' to stderr, indented. */
static void
show_head(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];

    for (int i = 0; f && i < 5 && fgets(line, sizeof line, f); i++) {
        fprintf(stderr, "    %s", line);
    }
    if (f) {
        fclose(f);
    }
}

/* Flow lines (those that start with a space: ovs-ofctl's header line
 * starts each reply message of a dump) in file 'path' (-1 if
 * unreadable). */
static long
count_flow_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int c, prev = '\n';

    if (!f) {
        return -1;
    }
    while ((c = getc(f)) != EOF) {
        n += prev == '\n' && c == ' ';
        prev = c;
    }
    fclose(f);
    return n;
}

/* ---------------------------------------------------------------------- */
/* The flows.                                                              */

/* Flow 'i' of the set, in ovs-ofctl syntax, into 'f'.  Every flow has its
 * own cookie (i + 1) and matches reg7 = i, which keeps it distinct from
 * every other whatever the random fields drew (as a controller keys its
 * flows by a register of its own), so that both switches hold exactly
 * FLOWS flows. */
static void
gen_flow(FILE *f, uint64_t *rng, unsigned int i)
{
    static const unsigned int levels[] = { 100, 200, 1000, 32768 };
    unsigned int table = test_rng_below(rng, 10);
    unsigned int prio = test_rng_below(rng, 4)
                        ? levels[test_rng_below(rng, 4)]
                        : 1 + test_rng_below(rng, 65535);
    uint32_t a = (uint32_t) test_rng_next(rng);
    unsigned int kind = test_rng_below(rng, 7);
    /* Conntrack and dec_ttl need an IP match (cases 0, 1, 4, 5). */
    bool ip = kind <= 1 || kind == 4 || kind == 5;

    fprintf(f, "table=%u,priority=%u,cookie=0x%x,reg7=0x%x,", table, prio,
            i + 1, i);
    switch (kind) {
    case 0:     /* An L4 service. */
        fprintf(f, "%s,nw_dst=10.%u.%u.%u,tp_dst=%u",
                test_rng_below(rng, 2) ? "tcp" : "udp", a >> 24 & 0xff,
                a >> 16 & 0xff, a >> 8 & 0xff, 1 + test_rng_below(rng, 65535));
        break;
    case 1:     /* Routes: source and destination prefixes. */
        fprintf(f, "ip,nw_src=10.%u.0.0/16,nw_dst=172.%u.%u.0/%u",
                a & 0xff, 16 + (a >> 8 & 0xf), a >> 16 & 0xff,
                20 + test_rng_below(rng, 5));
        break;
    case 2:     /* A port and a MAC (spoof guard). */
        fprintf(f, "in_port=%u,dl_src=0a:%02x:%02x:%02x:%02x:%02x",
                1 + test_rng_below(rng, 64), a >> 24 & 0xff, a >> 16 & 0xff,
                a >> 8 & 0xff, a & 0xff, test_rng_below(rng, 256));
        break;
    case 3:     /* A logical datapath and port. */
        fprintf(f, "metadata=0x%x,reg14=0x%x,dl_dst=0a:00:%02x:%02x:%02x:%02x",
                1 + test_rng_below(rng, 16), 1 + test_rng_below(rng, 512),
                a >> 24 & 0xff, a >> 16 & 0xff, a >> 8 & 0xff, a & 0xff);
        break;
    case 4:     /* IPv6. */
        fprintf(f, "ipv6,ipv6_dst=2001:db8:%x:%x::/64", a >> 16, a & 0xffff);
        break;
    case 5:     /* Conntrack state after ct(). */
        fprintf(f, "ct_state=%s,ip,reg0=0x%x/0xffff",
                test_rng_below(rng, 2) ? "+new+trk" : "-new+est+trk",
                a & 0xffff);
        break;
    default:    /* ARP for an address. */
        fprintf(f, "arp,arp_tpa=10.%u.%u.%u,arp_op=%u", a >> 24 & 0xff,
                a >> 16 & 0xff, a >> 8 & 0xff, 1 + test_rng_below(rng, 2));
        break;
    }

    fputs(",actions=", f);
    if (table < 9 && test_rng_below(rng, 2)) {
        /* Pipeline flows: set a register, maybe rewrite, go on. */
        fprintf(f, "load:0x%x->NXM_NX_REG%u[]", (unsigned int) (a >> 8),
                test_rng_below(rng, 6));
        if (test_rng_below(rng, 3) == 0) {
            fprintf(f, ",mod_dl_dst:0a:00:00:%02x:%02x:%02x", a >> 16 & 0xff,
                    a >> 8 & 0xff, a & 0xff);
        }
        if (ip && test_rng_below(rng, 4) == 0) {
            fprintf(f, ",ct(commit,zone=%u)", 1 + test_rng_below(rng, 100));
        }
        fprintf(f, test_rng_below(rng, 2) ? ",goto_table:%u"
                                          : ",resubmit(,%u)",
                table + 1 + test_rng_below(rng, 9 - table));
    } else {
        switch (test_rng_below(rng, 4)) {
        case 0:
            fputs("drop", f);
            break;
        case 1:
            fprintf(f, "%soutput:%u", ip ? "dec_ttl," : "",
                    1 + test_rng_below(rng, 64));
            break;
        case 2:
            fputs("output:NXM_NX_REG1[0..15]", f);
            break;
        default:
            fprintf(f, "mod_vlan_vid:%u,output:%u",
                    1 + test_rng_below(rng, 4094), 1 + test_rng_below(rng, 64));
            break;
        }
    }
    fputc('\n', f);
}

static bool
write_flows(const char *path, unsigned int n)
{
    FILE *f = fopen(path, "w");
    uint64_t rng = FLOW_SEED;

    if (!f) {
        return false;
    }
    for (unsigned int i = 0; i < n; i++) {
        gen_flow(f, &rng, i);
    }
    return fclose(f) == 0;
}

/* ---------------------------------------------------------------------- */
/* The two switches.                                                       */

struct side {
    const char *impl;           /* "flowdpd" or "ovs-vswitchd". */
    char target[PATH_MAX + 16]; /* "unix:PATH" for ovs-ofctl. */
    bool up;
    double add_ns, dump_ns;
};

/* Times the bundle add and the dump into 'side'; false (with the reason
 * on stderr) if either failed. */
static bool
time_side(struct side *s, const char *dir, const char *flows,
          unsigned int n)
{
    char out[PATH_MAX + 32], err[PATH_MAX + 32];
    char *add[] = { "ovs-ofctl", "-O", "OpenFlow15", "--bundle",
                    "add-flows", s->target, (char *) flows, NULL };
    char *dump[] = { "ovs-ofctl", "-O", "OpenFlow15", "dump-flows",
                     s->target, NULL };

    snprintf(err, sizeof err, "%s/%s-add.err", dir, s->impl);
    int rc = run(add, NULL, err, &s->add_ns);
    if (rc) {
        fprintf(stderr, "openflow: %s: ovs-ofctl --bundle add-flows failed "
                "(status %d):\n", s->impl, rc);
        show_head(err);
        return false;
    }
    snprintf(out, sizeof out, "%s/%s-dump.txt", dir, s->impl);
    snprintf(err, sizeof err, "%s/%s-dump.err", dir, s->impl);
    rc = run(dump, out, err, &s->dump_ns);
    long lines = count_flow_lines(out);
    if (rc || lines != (long) n) {
        fprintf(stderr, "openflow: %s: ovs-ofctl dump-flows: status %d, "
                "%ld flows for %u\n", s->impl, rc, lines, n);
        show_head(err);
        return false;
    }
    return true;
}

/* Starts Open vSwitch through tests/ovs-peer.sh; returns its directory
 * (to free()) or NULL, saying why on stderr. */
static char *
ovs_start(const char *script)
{
    char cmd[2 * PATH_MAX];

    if (strchr(script, '\'')) {
        fprintf(stderr, "openflow: ovs-vswitchd not run: a quote in %s\n",
                script);
        return NULL;
    }
    snprintf(cmd, sizeof cmd,
             ". '%s' && if why=`ovs_peer_unavailable`; then echo \"$why\" >&2;"
             " exit 1; fi && ovs_peer_start >&2 && ovs-vsctl --timeout=30 set"
             " bridge br0 protocols=OpenFlow10,OpenFlow13,OpenFlow14,"
             "OpenFlow15 && echo \"$OVS_PEER_DIR\"", script);
    char *dir = bash_line(cmd);
    if (!dir) {
        fprintf(stderr, "openflow: ovs-vswitchd did not start (see "
                "tests/ovs-peer.sh's message above): its side not run\n");
    }
    return dir;
}

static void
ovs_stop(const char *script, const char *dir, const char *workdir)
{
    char cmd[3 * PATH_MAX];

    /* ovs_peer_stop copies the logs to the current directory: the work
     * directory, removed afterwards. */
    snprintf(cmd, sizeof cmd, "cd '%s' && . '%s' && OVS_PEER_DIR='%s' && "
             "ovs_peer_stop >&2; echo done", workdir, script, dir);
    free(bash_line(cmd));
}

/* True if 'flowdpd --help' names 'option'. */
static bool
flowdpd_has(const char *flowdpd, const char *dir, const char *option)
{
    char out[PATH_MAX + 32];
    char *argv[] = { (char *) flowdpd, "--help", NULL };

    snprintf(out, sizeof out, "%s/flowdpd-help.txt", dir);
    if (run(argv, out, NULL, NULL) != 0) {
        return false;
    }
    FILE *f = fopen(out, "r");
    char line[512];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        found = strstr(line, option) != NULL;
    }
    if (f) {
        fclose(f);
    }
    return found;
}

/* Starts flowdpd with 'extra' arguments (NULL-terminated) in 'dir';
 * true once its OpenFlow socket exists. */
static bool
flowdpd_start(const char *flowdpd, const char *dir, char *const extra[])
{
    char pidfile[PATH_MAX + 32], log[PATH_MAX + 32], mgmt[PATH_MAX + 32];
    char of[PATH_MAX + 64];
    char *argv[16];
    size_t n = 0;

    snprintf(pidfile, sizeof pidfile, "--pidfile=%s/flowdpd.pid", dir);
    snprintf(log, sizeof log, "--log-file=%s/flowdpd.log", dir);
    snprintf(mgmt, sizeof mgmt, "%s/flowdpd.mgmt", dir);
    snprintf(of, sizeof of, "--openflow=punix:%s", mgmt);
    argv[n++] = (char *) flowdpd;
    argv[n++] = "--detach";
    argv[n++] = pidfile;
    argv[n++] = log;
    argv[n++] = of;
    for (size_t i = 0; extra && extra[i] && n < 15; i++) {
        argv[n++] = extra[i];
    }
    argv[n] = NULL;
    setenv("FLOWDP_RUNDIR", dir, 1);
    int rc = run(argv, NULL, NULL, NULL);
    if (rc) {
        fprintf(stderr, "openflow: flowdpd did not start (status %d; log "
                "%s/flowdpd.log)\n", rc, dir);
        return false;
    }
    for (int i = 0; i < 200; i++) {
        struct stat st;
        if (!stat(mgmt, &st)) {
            return true;
        }
        usleep(50000);
    }
    fprintf(stderr, "openflow: flowdpd made no %s in 10 s\n", mgmt);
    return false;
}

static void
flowdpd_stop(const char *dir)
{
    char path[PATH_MAX + 32];

    snprintf(path, sizeof path, "%s/flowdpd.pid", dir);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1) {
            pid = 0;
        }
        fclose(f);
    }
    if (pid > 0) {
        kill((pid_t) pid, SIGTERM);
        for (int i = 0; i < 100 && !access(path, F_OK); i++) {
            usleep(50000);
        }
    }
}

static void
report_case(const char *case_name, const char *impl, unsigned int n,
            double ns_per_op)
{
    struct result r = {
        .suite = "openflow", .case_name = case_name, .impl = impl,
        .entries = n, .ns_per_op = ns_per_op,
    };
    no_spread();
    report(&r);
}

void
suite_openflow(void)
{
    unsigned int n = quick ? FLOWS_QUICK : FLOWS_FULL;
    char dir[] = "/tmp/flowdp-bench-of.XXXXXX";
    char flows[sizeof dir + 16];

    report_header("openflow");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "openflow: cannot make a directory in /tmp: %s\n",
                strerror(errno));
        return;
    }
    snprintf(flows, sizeof flows, "%s/flows.txt", dir);
    if (!write_flows(flows, n)) {
        fprintf(stderr, "openflow: cannot write %s\n", flows);
        return;
    }

    struct side fdp = { .impl = "flowdpd" }, ovs = { .impl = "ovs-vswitchd" };
    struct side flr = { .impl = "client-floor" };
    char stub[sizeof dir + 16];
    snprintf(stub, sizeof stub, "%s/floor.mgmt", dir);
    struct floor_switch *fsw = floor_switch_start(stub);
    if (fsw) {
        snprintf(flr.target, sizeof flr.target, "unix:%s", stub);
        flr.up = time_side(&flr, dir, flows, n);
        floor_switch_stop(fsw);
    }
    char *flowdpd = find_flowdpd();
    bool channel = flowdpd_has(flowdpd, dir, "--openflow");
    if (!channel) {
        fprintf(stderr, "openflow: flowdpd has no OpenFlow channel yet "
                "(%s --help names no --openflow): its side not run\n",
                flowdpd);
    } else if (flowdpd_start(flowdpd, dir, NULL)) {
        snprintf(fdp.target, sizeof fdp.target, "unix:%s/flowdpd.mgmt", dir);
        fdp.up = time_side(&fdp, dir, flows, n);
        flowdpd_stop(dir);
    }

    char *script = find_peer_script();
    if (!script) {
        fprintf(stderr, "openflow: tests/ovs-peer.sh not found above the "
                "current directory or this program (set FLOWDP_SRCDIR): "
                "ovs-vswitchd not run, flowdpd reported alone\n");
    } else {
        char *ovs_dir = ovs_start(script);
        if (ovs_dir) {
            snprintf(ovs.target, sizeof ovs.target, "unix:%s/br0.mgmt",
                     ovs_dir);
            ovs.up = time_side(&ovs, dir, flows, n);
            ovs_stop(script, ovs_dir, dir);
            free(ovs_dir);
        }
        free(script);
    }

    static const char *const cases[] = { "bundle-add", "dump-flows" };
    for (int c = 0; c < 2; c++) {
        double f_ns = c ? fdp.dump_ns : fdp.add_ns;
        double o_ns = c ? ovs.dump_ns : ovs.add_ns;
        if (fdp.up) {
            report_case(cases[c], "flowdpd", n, f_ns / n);
        }
        if (ovs.up) {
            report_case(cases[c], "ovs-vswitchd", n, o_ns / n);
        }
        if (flr.up) {
            report_case(cases[c], "client-floor", n,
                        (c ? flr.dump_ns : flr.add_ns) / n);
        }
        if (fdp.up && ovs.up) {
            char name[64];
            snprintf(name, sizeof name, "%s-speedup", cases[c]);
            report_case(name, "ratio", n, f_ns > 0 ? o_ns / f_ns : 0);
        }
        if (flr.up && ovs.up) {
            /* The best speedup over ovs-vswitchd any switch could show:
             * one whose own work took no time at all. */
            double floor_ns = c ? flr.dump_ns : flr.add_ns;
            char name[64];
            snprintf(name, sizeof name, "%s-max-speedup", cases[c]);
            report_case(name, "ratio", n, floor_ns > 0 ? o_ns / floor_ns : 0);
        }
    }

    if (channel && flowdpd_has(flowdpd, dir, "--controller")) {
        bench_openflow_packet_in(flowdpd, dir);
    } else {
        fprintf(stderr, "openflow: packet-in not run: flowdpd has no "
                "--controller yet\n");
    }
    free(flowdpd);

    char *rm[] = { "rm", "-rf", dir, NULL };
    if (getenv("FLOWDP_BENCH_OF_KEEP")) {
        fprintf(stderr, "openflow: kept %s\n", dir);
        return;
    }
    run(rm, NULL, NULL, NULL);
}
