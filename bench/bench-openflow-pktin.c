/*
 * flowdp-bench openflow suite, packet-in cases (see bench-openflow.c for
 * the suite): packet-ins to a connected controller, and what they cost
 * the forwarding of other traffic.
 *
 * flowdpd runs with three ports and one pmd (--pmds=1: the packet-in
 * traffic and the other traffic share the thread, the strictest setup):
 *   port 1  pcap:rx=pktin.pcap,loop=BIG  1024 distinct 64-byte UDP frames
 *           replayed without end: the packet-in load;
 *   port 2  pcap:rx=other.pcap,loop=BIG  as many other frames: the other
 *           traffic, forwarded by "in_port=2,actions=output:3";
 *   port 3  pcap:tx=/dev/null            where the other traffic goes.
 * and connects with --controller=tcp:127.0.0.1:PORT to the controller
 * below: a listening socket of this process that sends an OpenFlow 1.3
 * hello, answers echo requests and counts OFPT_PACKET_IN messages (and
 * NXT_PACKET_IN2, flowdpd's choice if it makes it) without decoding them
 * further, as fast as it can read.
 *
 * Two windows of WINDOW seconds each, flows added with ovs-ofctl:
 *   base     "in_port=1,actions=drop": port 1 is read and dropped;
 *   loaded   "in_port=1,actions=controller": every port-1 packet goes to
 *            the controller.
 *   paced    1/16, then 1/8: back to "in_port=1,actions=drop", plus
 *            a flow that sends the frames whose UDP source port (the
 *            frame's number, 0-1023) is below 64 (then 128) to the
 *            controller: a packet-in rate a fraction of the unthrottled
 *            one, about what the goal asks (>= 100,000 per second), so
 *            that the forwarding cost of packet-ins at that rate is
 *            measured apart from what an unthrottled stream, which takes
 *            every cycle the machine has, costs.
 * Port 3's tx_packets (ovs-ofctl dump-ports) before and after each window
 * give the other traffic's rate.  Cases (impl "flowdpd"):
 *   packet-in              ns per packet-in received in the loaded window
 *                          (goal: >= 100,000 per second, <= 10,000 ns);
 *   forward-base           ns per packet forwarded port 2 -> 3, base;
 *   forward-with-packet-in the same in the loaded window;
 *   forward-slowdown       impl "ratio": loaded ns / base ns (goal:
 *                          <= 1.05);
 * and for each paced window the same three with the suffix "-1of16" or
 * "-1of8" (packet-in-1of16, forward-with-packet-in-1of16,
 * forward-slowdown-1of16: loaded over the base window's).
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"

extern char **environ;

#define N_FRAMES 1024
#define FRAME_LEN 64
#define BIG_LOOPS "100000000"

static double
wall_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes N_FRAMES UDP frames (destination port 'dport', source port the
 * frame's number) to the pcap file 'path'. */
static bool
write_pcap(const char *path, unsigned int dport)
{
    FILE *f = fopen(path, "wb");
    const uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

    if (!f) {
        return false;
    }
    fwrite(hdr, sizeof hdr, 1, f);
    for (unsigned int i = 0; i < N_FRAMES; i++) {
        uint8_t p[FRAME_LEN] = {
            0x0a, 0, 0, 0, 0, 2, 0x0a, 0, 0, 0, (uint8_t) (i >> 8),
            (uint8_t) i, 0x08, 0x00,
            0x45, 0, 0, FRAME_LEN - 14, 0, 0, 0, 0, 64, 17, 0, 0,
            10, 0, (uint8_t) (i >> 8), (uint8_t) i, 10, 0, 0, 2,
            (uint8_t) (i >> 8), (uint8_t) i, (uint8_t) (dport >> 8),
            (uint8_t) dport, 0, FRAME_LEN - 34, 0, 0,
        };
        const uint32_t rec[4] = { 0, 0, FRAME_LEN, FRAME_LEN };
        fwrite(rec, sizeof rec, 1, f);
        fwrite(p, sizeof p, 1, f);
    }
    return fclose(f) == 0;
}

/* Runs argv with stdout to 'out' (or /dev/null), stderr to /dev/null;
 * returns the exit status, -1 if it did not start. */
static int
run_quiet(char *const argv[], const char *out)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int error = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (error) {
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Port 3's tx_packets as ovs-ofctl dump-ports prints it, or -1. */
static long long
port3_tx(const char *target, const char *dir)
{
    char out[PATH_MAX + 32];
    char *argv[] = { "ovs-ofctl", "-O", "OpenFlow13", "dump-ports",
                     (char *) target, "3", NULL };

    snprintf(out, sizeof out, "%s/ports.txt", dir);
    if (run_quiet(argv, out)) {
        return -1;
    }
    FILE *f = fopen(out, "r");
    char line[512];
    long long tx = -1;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "tx pkts=");
        if (p) {
            tx = strtoll(p + 8, NULL, 10);
        }
    }
    if (f) {
        fclose(f);
    }
    return tx;
}

/* The controller's connection. */
struct ctl {
    int fd;
    uint8_t buf[1 << 20];
    size_t len;
    uint64_t packet_ins;
};

/* Reads what is there (for up to 'timeout_ms'), answers echo requests,
 * counts packet-ins; false if the connection ended. */
static bool
ctl_poll(struct ctl *c, int timeout_ms)
{
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

    if (poll(&pfd, 1, timeout_ms) <= 0) {
        return true;
    }
    ssize_t n = read(c->fd, c->buf + c->len, sizeof c->buf - c->len);
    if (n <= 0) {
        return n < 0 && errno == EINTR;
    }
    c->len += n;
    size_t off = 0;
    while (c->len - off >= 8) {
        const uint8_t *m = c->buf + off;
        size_t mlen = (size_t) m[2] << 8 | m[3];
        if (mlen < 8) {
            return false;
        }
        if (c->len - off < mlen) {
            break;
        }
        if (m[1] == 10) {                       /* OFPT_PACKET_IN. */
            c->packet_ins++;
        } else if (m[1] == 4 && mlen >= 16 && m[15] == 30) {
            c->packet_ins++;                    /* NXT_PACKET_IN2. */
        } else if (m[1] == 2) {                 /* Echo request. */
            uint8_t reply[8];
            memcpy(reply, m, 8);
            reply[1] = 3;
            reply[2] = 0;
            reply[3] = 8;
            if (write(c->fd, reply, 8) != 8) {
                return false;
            }
        }
        off += mlen;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
    return true;
}

static bool
ofctl_flows(const char *target, const char *what, const char *flow)
{
    char *argv[] = { "ovs-ofctl", "-O", "OpenFlow13", (char *) what,
                     (char *) target, (char *) flow, NULL };
    return run_quiet(argv, NULL) == 0;
}

static void
report_pi(const char *case_name, const char *impl, uint64_t n, double ns)
{
    struct result r = {
        .suite = "openflow", .case_name = case_name, .impl = impl,
        .entries = n, .ns_per_op = ns,
    };
    no_spread();
    report(&r);
}

/* One window: counts packet-ins and port 3's packets over 'secs'. */
static bool
window(struct ctl *c, const char *target, const char *dir, double secs,
       uint64_t *pins, long long *fwd)
{
    long long tx0 = port3_tx(target, dir);
    uint64_t p0 = c->packet_ins;
    double t0 = wall_s();
    while (wall_s() - t0 < secs) {
        if (!ctl_poll(c, 50)) {
            fprintf(stderr, "openflow: flowdpd closed the controller "
                    "connection\n");
            return false;
        }
    }
    long long tx1 = port3_tx(target, dir);
    *pins = c->packet_ins - p0;
    *fwd = tx0 >= 0 && tx1 >= tx0 ? tx1 - tx0 : -1;
    return *fwd >= 0;
}

void
bench_openflow_packet_in(const char *flowdpd, const char *dir)
{
    double secs = seconds_per_case > 0 ? seconds_per_case
                  : quick ? 0.5 : 3.0;
    char pktin[PATH_MAX + 32], other[PATH_MAX + 32];
    static struct ctl c;

    snprintf(pktin, sizeof pktin, "%s/pktin.pcap", dir);
    snprintf(other, sizeof other, "%s/other.pcap", dir);
    if (!write_pcap(pktin, 7777) || !write_pcap(other, 9999)) {
        fprintf(stderr, "openflow: cannot write capture files in %s\n", dir);
        return;
    }

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = { .sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t slen = sizeof sin;
    if (lfd < 0 || bind(lfd, (struct sockaddr *) &sin, sizeof sin)
        || listen(lfd, 1) || getsockname(lfd, (struct sockaddr *) &sin,
                                         &slen)) {
        fprintf(stderr, "openflow: packet-in: no listening socket: %s\n",
                strerror(errno));
        if (lfd >= 0) {
            close(lfd);
        }
        return;
    }

    char controller[64], p1[PATH_MAX + 64], p2[PATH_MAX + 64];
    char pidfile[PATH_MAX + 32], log[PATH_MAX + 32], of[PATH_MAX + 48];
    char target[PATH_MAX + 32];
    snprintf(controller, sizeof controller, "--controller=tcp:127.0.0.1:%u",
             ntohs(sin.sin_port));
    snprintf(p1, sizeof p1, "--port=1=pcap:rx=%s,loop=" BIG_LOOPS, pktin);
    snprintf(p2, sizeof p2, "--port=2=pcap:rx=%s,loop=" BIG_LOOPS, other);
    snprintf(pidfile, sizeof pidfile, "--pidfile=%s/flowdpd-pi.pid", dir);
    snprintf(log, sizeof log, "--log-file=%s/flowdpd-pi.log", dir);
    snprintf(of, sizeof of, "--openflow=punix:%s/flowdpd-pi.mgmt", dir);
    snprintf(target, sizeof target, "unix:%s/flowdpd-pi.mgmt", dir);
    char *argv[] = { (char *) flowdpd, "--detach", pidfile, log, of,
                     "--pmds=1", p1, p2, "--port=3=pcap:tx=/dev/null",
                     controller, NULL };
    if (run_quiet(argv, NULL)) {
        fprintf(stderr, "openflow: packet-in: flowdpd did not start (see "
                "%s/flowdpd-pi.log)\n", dir);
        close(lfd);
        return;
    }

    struct pollfd pfd = { .fd = lfd, .events = POLLIN };
    bool ok = false;
    if (poll(&pfd, 1, 10000) == 1 && (c.fd = accept(lfd, NULL, NULL)) >= 0) {
        const uint8_t hello[8] = { 4, 0, 0, 8, 0, 0, 0, 1 };
        ok = write(c.fd, hello, 8) == 8;
    } else {
        fprintf(stderr, "openflow: packet-in: flowdpd did not connect to "
                "the controller in 10 s\n");
    }
    close(lfd);

    uint64_t pins_base, pins_loaded;
    long long fwd_base, fwd_loaded;
    /* The paced windows: the flow that sends a fraction of port 1's
     * frames (those of UDP source port below 1024 / N) to the
     * controller. */
    static const struct {
        const char *suffix;
        const char *flow;
    } paces[] = {
        { "-1of16", "priority=40000,in_port=1,udp,tp_src=0/0xffc0,"
                    "actions=controller" },
        { "-1of8", "priority=40000,in_port=1,udp,tp_src=0/0xff80,"
                   "actions=controller" },
    };
    enum { N_PACES = sizeof paces / sizeof paces[0] };
    uint64_t pins_paced[N_PACES];
    long long fwd_paced[N_PACES];
    bool paced_ok[N_PACES] = { false };
    if (ok) {
        /* The hello exchange and the connection's settling. */
        for (int i = 0; i < 10 && ok; i++) {
            ok = ctl_poll(&c, 50);
        }
        ok = ok && ofctl_flows(target, "add-flow",
                               "in_port=2,actions=output:3")
             && ofctl_flows(target, "add-flow", "in_port=1,actions=drop")
             && window(&c, target, dir, secs, &pins_base, &fwd_base)
             && ofctl_flows(target, "mod-flows",
                            "in_port=1,actions=controller")
             && window(&c, target, dir, secs, &pins_loaded, &fwd_loaded);
        if (!ok) {
            fprintf(stderr, "openflow: packet-in: a window failed (flows "
                    "refused, or port 3's counters unreadable)\n");
        }
        bool back = ok && ofctl_flows(target, "mod-flows",
                                      "in_port=1,actions=drop");
        for (int i = 0; back && i < N_PACES; i++) {
            paced_ok[i] = (ofctl_flows(target, "add-flow", paces[i].flow)
                           && window(&c, target, dir, secs, &pins_paced[i],
                                     &fwd_paced[i]));
        }
    }
    if (ok) {
        report_pi("packet-in", "flowdpd", pins_loaded,
                  pins_loaded ? secs * 1e9 / pins_loaded : 0);
        double base = fwd_base ? secs * 1e9 / fwd_base : 0;
        double loaded = fwd_loaded ? secs * 1e9 / fwd_loaded : 0;
        report_pi("forward-base", "flowdpd", (uint64_t) fwd_base, base);
        report_pi("forward-with-packet-in", "flowdpd",
                  (uint64_t) fwd_loaded, loaded);
        report_pi("forward-slowdown", "ratio", (uint64_t) fwd_loaded,
                  base > 0 ? loaded / base : 0);
        for (int i = 0; i < N_PACES; i++) {
            char name[64];
            if (!paced_ok[i]) {
                continue;
            }
            double paced = fwd_paced[i] ? secs * 1e9 / fwd_paced[i] : 0;
            snprintf(name, sizeof name, "packet-in%s", paces[i].suffix);
            report_pi(name, "flowdpd", pins_paced[i],
                      pins_paced[i] ? secs * 1e9 / pins_paced[i] : 0);
            snprintf(name, sizeof name, "forward-with-packet-in%s",
                     paces[i].suffix);
            report_pi(name, "flowdpd", (uint64_t) fwd_paced[i], paced);
            snprintf(name, sizeof name, "forward-slowdown%s",
                      paces[i].suffix);
            report_pi(name, "ratio", (uint64_t) fwd_paced[i],
                      base > 0 ? paced / base : 0);
        }
    }
    if (c.fd > 0) {
        close(c.fd);
    }

    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/flowdpd-pi.pid", dir);
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
