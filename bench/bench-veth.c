/*
 * flowdp-bench datapath suite, veth cases: real packets through the kernel.
 *
 * What
 * ====
 * Packets per second that reach a sink in one network namespace when a
 * generator in another sends as fast as it can and something in between
 * forwards them: the Linux kernel's own forwarding (a bridge; an XDP
 * program that redirects) and flowdp's datapath with afxdp and afpacket
 * ports, one after the other on the same veth pairs in one run.
 *
 * Topology
 * ========
 * Three namespaces, named fdpV<pid>src, fdpV<pid>fwd and fdpV<pid>dst so
 * that concurrent runs (the test suite runs in parallel) never meet:
 *
 *     src            fwd                       dst
 *     s0 ---veth--- s1   [forwarder]   d1 ---veth--- d0
 *   10.254.0.1                                     10.254.0.2
 *
 * Addresses exist only inside these namespaces, and nothing is routed:
 * every forwarder works at layer 2.  The forwarders, in turn:
 *
 *   veth-bridge        a Linux bridge br0 in fwd with s1 and d1 as ports
 *                      (created for the case, deleted after it);
 *   veth-xdp-redirect  a native XDP program on s1 that returns
 *                      bpf_redirect(ifindex of d1, 0) for every frame;
 *   veth-afxdp         flowdp: a datapath with ports 1 = afxdp:dev=s1 and
 *                      2 = afxdp:dev=d1, the flow in_port=1,actions=output:2
 *                      and one pmd thread that enters fwd (setns) and polls,
 *                      as flowdpd does;
 *   veth-afpacket      the same with afpacket:dev=s1 and afpacket:dev=d1.
 * A flowdp case whose port type this build lacks (fdp_dp_port_add()
 * refuses the spec) is reported as skipped with the datapath's message.
 *
 * Generator
 * =========
 * A thread that enters src sends the same 60-byte UDP/IPv4 frame (64 bytes
 * on a wire with the FCS) from s0 to d0's MAC address, in one of two ways,
 * chosen once per run so that every forwarder gets the same one:
 *   xdp-live   BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES (kernel
 *              5.18 and later; libbpf) runs a program that counts the
 *              frame and redirects it to s0, LIVE_REPEAT frames per call:
 *              the kernel builds the frames itself, with no socket buffer
 *              and no system call per frame.  The default where it works.
 *   af_packet  an AF_PACKET socket with PACKET_QDISC_BYPASS, SEND_BATCH
 *              frames per sendmmsg(), counting the frames the kernel
 *              accepted: without libbpf, on older kernels, or with
 *              FLOWDP_BENCH_VETH_GEN=af_packet.  It made 8x fewer frames
 *              per second into the XDP redirect here.
 * (The kernel's pktgen is a module that many kernels, this machine's
 * included, do not have.)  s1 has GRO on in every case: a veth device
 * takes frames XDP redirected to its peer only if it runs NAPI (see
 * "Sink"), and the bridge and afpacket attach no XDP program to s1.
 *
 * Sink
 * ====
 * An XDP program on d0 that counts each frame in a per-CPU array and drops
 * it, so the sink costs a few instructions per packet and no socket.  It
 * is attached for the whole run, which veth needs anyway: a veth device
 * delivers a frame that XDP redirected to it (veth_xdp_xmit() on d1 puts
 * it on the peer's receive queue) only if its peer d0 runs NAPI, which
 * it does when an XDP program is attached to d0 (or GRO is enabled on
 * it); without that, redirected frames are dropped and counted as d1's
 * transmit errors.  The bridge and flowdp deliver socket buffers to d0,
 * which the same program sees on the same queue.  Without libbpf (or with
 * FLOWDP_BENCH_VETH_SINK=rx_packets) the sink is d0's rx_packets counter
 * read over rtnetlink, GRO on d0 giving it NAPI; the frames then go up
 * dst's stack, which costs the forwarders' CPU, so those figures are
 * lower and only comparable among themselves.
 *
 * What is measured
 * ================
 * For each forwarder: the generator starts; once the first frames reach
 * the sink (warm-up, at most WARMUP_NS), measure() times how long d0
 * takes to receive N more frames, N calibrated so that each of its 5 runs
 * lasts about --seconds / 5 (0.2 s without --seconds, 0.02 s with
 * --quick): the
 * median is ns per received packet, reported as case veth-FORWARDER, impl
 * "received".  The generator's rate over the same runs is the row with
 * impl "sent" (what was offered; the difference was dropped on the way).
 * The generator, the forwarder and the sink share this machine's CPUs:
 * the figures compare forwarders with each other in one run; they are not
 * the forwarders' rates on dedicated cores.  The kernel's forwarders run
 * in the generator's own context (veth runs the NAPI poll it schedules
 * when the generator's bottom half ends, on the same CPU), so for them
 * "sent" equals "received"; flowdp's pmd polls on a thread of its own.
 *
 * Setup uses "ip" (iproute2) through popen(): namespaces, veth pairs,
 * addresses and the bridge, which would be a few hundred lines of
 * rtnetlink by hand.  XDP programs are raw BPF instructions (no BPF
 * compiler needed) loaded and attached with libbpf; without libbpf the
 * XDP redirect case is skipped.  Everything is removed when the cases end, at
 * exit (fatal() included) and on SIGINT, SIGTERM or SIGHUP: removing the
 * three namespaces (what "ip netns delete" does: unmount and unlink their
 * /run/netns entries, async-signal-safe) removes the veths, the bridge
 * and the programs attached to them once this process's threads are
 * gone.  Only SIGKILL leaves them behind, under names that say whose
 * they were.
 */
#include <config.h>

#include "bench/bench.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#include <flowdp/flowdp.h>
#include "utilities/tool.h"

#define VETH_FRAME_LEN 60       /* 64 bytes on a wire, less the FCS. */
#define VXLAN_OUTER_LEN 50      /* Ethernet, IPv4, UDP and VXLAN headers. */
#define VETH_MAX_FRAME (VETH_FRAME_LEN + VXLAN_OUTER_LEN)
#define SEND_BATCH 64           /* Frames per sendmmsg(): enough that the
                                 * system call costs little per frame. */
#define VETH_RUNS 5             /* measure()'s timed runs. */
#define WARMUP_NS 2e9           /* The longest wait for a first frame. */
#define STALL_NS 1e9            /* No frame for this long: stalled. */
#define LIVE_REPEAT (1 << 20)   /* Frames per BPF_PROG_TEST_RUN call.  Each
                                 * call costs about 25 ms of setup and
                                 * teardown on this machine (4096 frames
                                 * per call made 0.16 Mpps, 2^20 made
                                 * 8.7 with an XDP_DROP program), a gap
                                 * in the traffic: so many frames per
                                 * call.  The program counts what it sends
                                 * and drops the rest of a call's frames
                                 * once told to stop. */
#define LIVE_BATCH 64           /* Frames the kernel builds and flushes at
                                 * once (its default, at most 256). */

/* The interfaces' MAC addresses, fixed so that the frame needs no
 * look-up: locally administered (0x02), "fd" for flowdp. */
#define MAC_S0 "02:fd:00:00:00:01"
#define MAC_D0 "02:fd:00:00:00:02"
#define MAC_S1 "02:fd:00:00:00:11"
static const uint8_t mac_s0[6] = { 0x02, 0xfd, 0, 0, 0, 0x01 };
static const uint8_t mac_d0[6] = { 0x02, 0xfd, 0, 0, 0, 0x02 };
static const uint8_t mac_s1[6] = { 0x02, 0xfd, 0, 0, 0, 0x11 };

/* The tunnel cases' underlay (flowdp-bench tunnel): s0 is the far VXLAN
 * endpoint 10.253.0.2, the forwarder 10.253.0.1 on s1; VNI 42. */
#define TNL_LOCAL "10.253.0.1"
#define TNL_REMOTE "10.253.0.2"
#define TNL_VNI 42

/* What the generator sends: the plain frame, or the same frame inside
 * VXLAN from the far endpoint to s1 (the tunnel cases). */
static bool gen_vxlan;

enum veth_ns { NS_SRC, NS_FWD, NS_DST, N_NS };

/* How frames are made (see "Generator" above). */
enum veth_gen { GEN_XDP_LIVE, GEN_AF_PACKET };
static const char *const gen_name[] = { "xdp-live", "af_packet" };
static const char *const ns_role[N_NS] = { "src", "fwd", "dst" };

/* Everything the cases set up, global so that the exit and signal
 * handlers can remove it. */
struct veth_env {
    char ns_name[N_NS][32];
    char ns_path[N_NS][64];     /* /run/netns/NAME. */
    int ns_fd[N_NS];
    int home_fd;                /* The namespace the bench started in. */
    int ifindex_s0, ifindex_s1, ifindex_d1, ifindex_d0;
    int sink_map_fd, sink_prog_fd;  /* The XDP sink (libbpf). */
    int n_cpus;                 /* Values per key of the per-CPU map. */
    uint64_t *sink_values;
    int sink_nl_fd;             /* Without libbpf: rtnetlink in dst. */
    uint64_t sink_last;         /* Its last good reading. */
    enum veth_gen gen;
    int gen_map_fd;             /* GEN_XDP_LIVE: struct gen_state. */
    int gen_prog_fd;            /* GEN_XDP_LIVE: redirects to s0. */
};

static struct veth_env env = {
    .ns_fd = { -1, -1, -1 }, .home_fd = -1,
    .sink_map_fd = -1, .sink_prog_fd = -1, .gen_prog_fd = -1,
    .gen_map_fd = -1, .sink_nl_fd = -1,
};
static volatile sig_atomic_t env_live;  /* Namespaces may exist. */

/* ---------------------------------------------------------------------- */
/* Cleanup.                                                                */

/* Removes the namespaces as "ip netns delete" does.  Only system calls:
 * safe in a signal handler. */
static void
remove_namespaces(void)
{
    if (!env_live) {
        return;
    }
    for (int i = 0; i < N_NS; i++) {
        if (env.ns_path[i][0]) {
            umount2(env.ns_path[i], MNT_DETACH);
            unlink(env.ns_path[i]);
        }
    }
    env_live = 0;
}

static void
veth_atexit(void)
{
    remove_namespaces();
}

enum { N_CLEANUP_SIGNALS = 3 };
static const int cleanup_signals[N_CLEANUP_SIGNALS] = {
    SIGINT, SIGTERM, SIGHUP
};
static struct sigaction saved_actions[N_CLEANUP_SIGNALS];
static bool handled[N_CLEANUP_SIGNALS]; /* veth_signal() installed. */

static void
veth_signal(int sig)
{
    remove_namespaces();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
install_cleanup(void)
{
    static bool registered;
    struct sigaction sa;

    if (!registered) {
        atexit(veth_atexit);
        registered = true;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = veth_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        /* A signal the bench ignores (a shell's background job ignores
         * SIGINT) stays ignored. */
        sigaction(cleanup_signals[i], NULL, &saved_actions[i]);
        handled[i] = saved_actions[i].sa_handler != SIG_IGN;
        if (handled[i]) {
            sigaction(cleanup_signals[i], &sa, NULL);
        }
    }
}

static void
teardown(void)
{
    if (env.gen_prog_fd >= 0) {
        close(env.gen_prog_fd);
        env.gen_prog_fd = -1;
    }
    if (env.gen_map_fd >= 0) {
        close(env.gen_map_fd);
        env.gen_map_fd = -1;
    }
    if (env.sink_prog_fd >= 0) {
        close(env.sink_prog_fd);
        env.sink_prog_fd = -1;
    }
    if (env.sink_map_fd >= 0) {
        close(env.sink_map_fd);
        env.sink_map_fd = -1;
    }
    if (env.sink_nl_fd >= 0) {
        close(env.sink_nl_fd);
        env.sink_nl_fd = -1;
    }
    free(env.sink_values);
    env.sink_values = NULL;
    for (int i = 0; i < N_NS; i++) {
        if (env.ns_fd[i] >= 0) {
            close(env.ns_fd[i]);
            env.ns_fd[i] = -1;
        }
    }
    remove_namespaces();
    if (env.home_fd >= 0) {
        close(env.home_fd);
        env.home_fd = -1;
    }
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        if (handled[i]) {
            sigaction(cleanup_signals[i], &saved_actions[i], NULL);
            handled[i] = false;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Helpers.                                                                */

/* Prints "CASE LABEL: MSG" in the table, or to stderr with --json (whose
 * stdout holds only results). */
static void
note(const char *case_name, const char *label, const char *msg)
{
    if (json_output) {
        fprintf(stderr, "%s: datapath %s: %s: %s\n", program_name,
                case_name, label, msg);
    } else {
        printf("%-32s %s: %s\n", case_name, label, msg);
        fflush(stdout);
    }
}

static void
skip(const char *case_name, const char *msg)
{
    note(case_name, "skipped", msg);
}

/* Runs the shell command made from 'format'.  Returns NULL on success, or
 * a message with the command and its output, which the caller frees. */
static char * __attribute__((format(printf, 1, 2)))
run_cmd(const char *format, ...)
{
    char cmd[1024], out[512];
    size_t len = 0;
    va_list args;

    va_start(args, format);
    vsnprintf(cmd, sizeof cmd, format, args);
    va_end(args);

    char *full = xasprintf("(%s) 2>&1", cmd);
    FILE *p = full ? popen(full, "r") : NULL;
    free(full);
    if (!p) {
        return xasprintf("%s: %s", cmd, strerror(errno));
    }
    while (len < sizeof out - 1) {
        size_t n = fread(out + len, 1, sizeof out - 1 - len, p);
        if (!n) {
            break;
        }
        len += n;
    }
    out[len] = '\0';
    while (len && (out[len - 1] == '\n' || out[len - 1] == ' ')) {
        out[--len] = '\0';
    }
    int status = pclose(p);
    if (status == 0) {
        return NULL;
    }
    return xasprintf("\"%s\" failed%s%s", cmd, len ? ": " : "", out);
}

static int
enter_ns(int fd)
{
    return setns(fd, CLONE_NEWNET) ? errno : 0;
}

/* Puts the calling thread on CPU 'cpu' (counted from the last online CPU
 * if negative): the generator, and with it the kernel's forwarding that
 * runs in its context, on the first CPU, flowdp's pmd on the last, as a
 * switch gives its pmd a core of its own.  With one CPU, both share it.
 * flowdp-bench --cpu pins the main thread, and threads inherit that, so
 * each thread sets its own. */
static void
pin_thread(long cpu)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;

    if (n < 1) {
        return;
    }
    cpu = cpu < 0 ? n + cpu : cpu;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu % n, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static int
cmp_double(const void *a_, const void *b_)
{
    double a = *(const double *) a_, b = *(const double *) b_;

    return a < b ? -1 : a > b;
}

static void
sleep_ns(double ns)
{
    struct timespec ts = { .tv_sec = (time_t) (ns / 1e9),
                           .tv_nsec = (long) ((uint64_t) ns % 1000000000) };
    nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------- */
/* XDP programs, as raw BPF instructions.                                  */

#ifdef HAVE_LIBBPF

static struct bpf_insn
insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    return (struct bpf_insn) { .code = code, .dst_reg = dst, .src_reg = src,
                               .off = off, .imm = imm };
}

/* Loads the 'n' instructions at 'insns' as an XDP program.  Returns its
 * file descriptor, or -1 with a message in '*msgp'. */
static int
load_xdp(const char *name, const struct bpf_insn *insns, size_t n,
         char **msgp)
{
    static char log[4096];
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log,
                .log_size = sizeof log, .log_level = 1);

    log[0] = '\0';
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, name, "GPL", insns, n, &opts);
    if (fd < 0) {
        *msgp = xasprintf("loading the XDP program %s: %s%s%s", name,
                          strerror(-fd), log[0] ? "; verifier: " : "", log);
    }
    return fd;
}

/* The redirect forwarder: r0 = bpf_redirect(ifindex, 0); return r0. */
static int
load_redirect(int ifindex, char **msgp)
{
    const struct bpf_insn prog[] = {
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, ifindex),
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0),
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect),
        insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };

    return load_xdp("fdp_redirect", prog, sizeof prog / sizeof prog[0],
                    msgp);
}

/* The value of the XDP generator's one-slot array map. */
struct gen_state {
    uint64_t stop;              /* Nonzero: drop instead of sending. */
    uint64_t sent;              /* Frames redirected to s0. */
};

/* The XDP generator, run by BPF_PROG_TEST_RUN on live frames: unless
 * told to stop, counts the frame and redirects it to 'ifindex' (s0),
 * whose peer s1 receives it.  One thread runs it on one CPU at a time,
 * so the count needs no atomic add. */
static int
load_generator(int ifindex, int map_fd, char **msgp)
{
    const struct bpf_insn prog[] = {
        /* r0 = bpf_map_lookup_elem(map, &(u32) {0}). */
        insn(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
        insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
        insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
        insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0,
             map_fd),
        insn(0, 0, 0, 0, 0),
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
        /* if (!r0 || r0->stop) goto drop (instruction 16). */
        insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 9, 0),
        insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0),
        insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 7, 0),
        /* r0->sent++. */
        insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 8, 0),
        insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1),
        insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 8, 0),
        /* return bpf_redirect(ifindex, 0). */
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, ifindex),
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0),
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect),
        insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        /* drop: return XDP_DROP. */
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_DROP),
        insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };

    return load_xdp("fdp_generator", prog, sizeof prog / sizeof prog[0],
                    msgp);
}

static void
gen_state_set(uint64_t stop)
{
    struct gen_state st = { .stop = stop };
    uint32_t key = 0;

    bpf_map_update_elem(env.gen_map_fd, &key, &st, BPF_ANY);
}

/* The sink: counts the frame in slot 0 of the per-CPU array 'map_fd' (a
 * plain add: each CPU has its own counter, and XDP runs with migration
 * off), then drops it. */
static int
load_sink(int map_fd, char **msgp)
{
    const struct bpf_insn prog[] = {
        /* key = 0, on the stack at r10 - 4; r2 = &key. */
        insn(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
        insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
        insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
        /* r1 = the map (a 16-byte load: two instructions). */
        insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0,
             map_fd),
        insn(0, 0, 0, 0, 0),
        /* r0 = bpf_map_lookup_elem(map, &key); if (r0) (*r0)++. */
        insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
        insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0),
        insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0),
        insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1),
        insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0),
        /* return XDP_DROP. */
        insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_DROP),
        insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
    };

    return load_xdp("fdp_sink", prog, sizeof prog / sizeof prog[0], msgp);
}

/* Attaches 'prog_fd' in native (driver) mode to 'ifindex' in namespace
 * 'ns' (libbpf's netlink socket lives in the calling thread's
 * namespace).  Returns NULL or a message. */
static char *
attach_xdp(enum veth_ns ns, int ifindex, const char *ifname, int prog_fd)
{
    int error = enter_ns(env.ns_fd[ns]);
    if (!error) {
        error = -bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL);
        enter_ns(env.home_fd);
    }
    return error ? xasprintf("attaching XDP to %s: %s", ifname,
                             strerror(error)) : NULL;
}

static void
detach_xdp(enum veth_ns ns, int ifindex)
{
    if (!enter_ns(env.ns_fd[ns])) {
        bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
        enter_ns(env.home_fd);
    }
}

/* Frames the XDP sink has counted so far. */
static uint64_t
sink_read_xdp(void)
{
    uint32_t key = 0;
    uint64_t sum = 0;

    if (bpf_map_lookup_elem(env.sink_map_fd, &key, env.sink_values)) {
        return env.sink_last;
    }
    for (int i = 0; i < env.n_cpus; i++) {
        sum += env.sink_values[i];
    }
    env.sink_last = sum;
    return sum;
}

/* Loads the sink and attaches it to d0.  Returns NULL or why not. */
static char *
setup_xdp_sink(void)
{
    char *msg = NULL;

    env.n_cpus = libbpf_num_possible_cpus();
    if (env.n_cpus <= 0) {
        return xasprintf("counting CPUs: %s", strerror(-env.n_cpus));
    }
    env.sink_values = calloc((size_t) env.n_cpus, sizeof *env.sink_values);
    if (!env.sink_values) {
        fatal("datapath: veth: out of memory");
    }
    env.sink_map_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "fdp_sink",
                                     sizeof(uint32_t), sizeof(uint64_t), 1,
                                     NULL);
    if (env.sink_map_fd < 0) {
        return xasprintf("creating the sink's map: %s",
                         strerror(-env.sink_map_fd));
    }
    env.sink_prog_fd = load_sink(env.sink_map_fd, &msg);
    if (env.sink_prog_fd < 0) {
        return msg;
    }
    return attach_xdp(NS_DST, env.ifindex_d0, "d0", env.sink_prog_fd);
}

#else /* !HAVE_LIBBPF */

static void
gen_state_set(uint64_t stop)
{
}

#endif /* HAVE_LIBBPF */

/* ---------------------------------------------------------------------- */
/* The sink without libbpf: d0's receive counter.                          */

/* A rtnetlink socket made in dst, where d0 is (a socket keeps the
 * namespace it was made in).  Returns NULL or why not. */
static char *
setup_netlink_sink(void)
{
    int error = enter_ns(env.ns_fd[NS_DST]);

    if (!error) {
        env.sink_nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
                                NETLINK_ROUTE);
        error = env.sink_nl_fd < 0 ? errno : 0;
        enter_ns(env.home_fd);
    }
    return error ? xasprintf("rtnetlink socket in dst: %s", strerror(error))
           : NULL;
}

/* d0's rx_packets (IFLA_STATS64 of RTM_GETLINK), or the last good reading
 * if the kernel's answer is not one. */
static uint64_t
sink_read_netlink(void)
{
    static uint32_t seq;
    static uint64_t buf[4096];      /* 32 kB: one link's attributes. */
    struct {
        struct nlmsghdr nh;
        struct ifinfomsg ifi;
    } req = {
        .nh = { .nlmsg_len = sizeof req, .nlmsg_type = RTM_GETLINK,
                .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = ++seq },
        .ifi = { .ifi_family = AF_UNSPEC, .ifi_index = env.ifindex_d0 },
    };

    if (send(env.sink_nl_fd, &req, sizeof req, 0) < 0) {
        return env.sink_last;
    }
    ssize_t n = recv(env.sink_nl_fd, buf, sizeof buf, 0);
    struct nlmsghdr *nh = (struct nlmsghdr *) buf;
    if (n < 0 || !NLMSG_OK(nh, (size_t) n)
        || nh->nlmsg_type != RTM_NEWLINK) {
        return env.sink_last;
    }

    int len = (int) IFLA_PAYLOAD(nh);
    for (struct rtattr *a = IFLA_RTA((struct ifinfomsg *) NLMSG_DATA(nh));
         RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        struct rtnl_link_stats64 st;

        if (a->rta_type == IFLA_STATS64 && RTA_PAYLOAD(a) >= sizeof st) {
            memcpy(&st, RTA_DATA(a), sizeof st);
            env.sink_last = st.rx_packets;
            break;
        }
    }
    return env.sink_last;
}

/* Frames the sink has counted so far. */
static uint64_t
sink_read(void)
{
#ifdef HAVE_LIBBPF
    if (env.sink_nl_fd < 0) {
        return sink_read_xdp();
    }
#endif
    return sink_read_netlink();
}

/* ---------------------------------------------------------------------- */
/* Setup.                                                                  */

static int
ifindex_in(enum veth_ns ns, const char *name)
{
    int ifindex = 0;

    if (!enter_ns(env.ns_fd[ns])) {
        ifindex = (int) if_nametoindex(name);
        enter_ns(env.home_fd);
    }
    return ifindex;
}

/* Turns GRO on for 'ifname' in 'ns', as "ethtool -K IFNAME gro on" does
 * (ETHTOOL_SGRO).  A veth device with GRO runs NAPI, and so accepts the
 * frames that XDP redirects to its peer (see "Sink" above). */
static char *
enable_gro(enum veth_ns ns, const char *ifname)
{
    struct ethtool_value ev = { .cmd = ETHTOOL_SGRO, .data = 1 };
    struct ifreq ifr;
    int error = enter_ns(env.ns_fd[ns]);

    if (!error) {
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = errno;
        } else {
            memset(&ifr, 0, sizeof ifr);
            snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
            ifr.ifr_data = (char *) &ev;
            if (ioctl(fd, SIOCETHTOOL, &ifr)) {
                error = errno;
            }
            close(fd);
        }
        enter_ns(env.home_fd);
    }
    return error ? xasprintf("enabling GRO on %s: %s", ifname,
                             strerror(error)) : NULL;
}

/* Creates the namespaces, the veth pairs and the sink.  Returns NULL or
 * why not. */
static char *
setup(void)
{
    const char *s, *f, *d;
    char *msg;

    if (geteuid() != 0) {
        return xasprintf("needs root (network namespaces, veth pairs, "
                         "XDP)");
    }
    env.home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (env.home_fd < 0) {
        return xasprintf("/proc/thread-self/ns/net: %s", strerror(errno));
    }
    for (int i = 0; i < N_NS; i++) {
        snprintf(env.ns_name[i], sizeof env.ns_name[i], "fdpV%ld%s",
                 (long) getpid(), ns_role[i]);
        snprintf(env.ns_path[i], sizeof env.ns_path[i], "/run/netns/%s",
                 env.ns_name[i]);
    }
    s = env.ns_name[NS_SRC];
    f = env.ns_name[NS_FWD];
    d = env.ns_name[NS_DST];

    install_cleanup();
    env_live = 1;
    msg = run_cmd("ip netns add %s && ip netns add %s && ip netns add %s",
                  s, f, d);
    if (!msg) {
        msg = run_cmd("ip -n %s link add s1 address " MAC_S1 " type veth "
                      "peer name s0 netns %s address " MAC_S0 " && "
                      "ip -n %s link add d1 type veth peer name d0 netns %s "
                      "address " MAC_D0, f, s, f, d);
    }
    if (!msg) {
        msg = run_cmd("ip -n %s link set lo up && "
                      "ip -n %s link set s0 up && "
                      "ip -n %s addr add 10.254.0.1/24 dev s0 && "
                      "ip -n %s link set s1 up && ip -n %s link set d1 up && "
                      "ip -n %s link set d0 up && "
                      "ip -n %s addr add 10.254.0.2/24 dev d0",
                      s, s, s, f, f, d, d);
    }
    if (msg) {
        return msg;
    }
    for (int i = 0; i < N_NS; i++) {
        env.ns_fd[i] = open(env.ns_path[i], O_RDONLY | O_CLOEXEC);
        if (env.ns_fd[i] < 0) {
            return xasprintf("%s: %s", env.ns_path[i], strerror(errno));
        }
    }
    env.ifindex_s0 = ifindex_in(NS_SRC, "s0");
    env.ifindex_s1 = ifindex_in(NS_FWD, "s1");
    env.ifindex_d1 = ifindex_in(NS_FWD, "d1");
    env.ifindex_d0 = ifindex_in(NS_DST, "d0");
    if (!env.ifindex_s0 || !env.ifindex_s1 || !env.ifindex_d1
        || !env.ifindex_d0) {
        return xasprintf("the veth interfaces have no index");
    }

    /* s1 runs NAPI in every case, so that the XDP generator can reach it
     * (the bridge and afpacket attach no program to it). */
    msg = enable_gro(NS_FWD, "s1");
    if (msg) {
        return msg;
    }

    /* The sink: the XDP one, unless there is no libbpf or
     * FLOWDP_BENCH_VETH_SINK=rx_packets asks for d0's counter, which
     * needs GRO on d0 for NAPI (see "Sink" above). */
#ifdef HAVE_LIBBPF
    const char *sink_kind = getenv("FLOWDP_BENCH_VETH_SINK");
    if (!sink_kind || strcmp(sink_kind, "rx_packets")) {
        return setup_xdp_sink();
    }
#endif
    msg = enable_gro(NS_DST, "d0");
    return msg ? msg : setup_netlink_sink();
}

/* ---------------------------------------------------------------------- */
/* The generator.                                                          */

struct generator {
    pthread_t thread;
    atomic_bool stop;
    _Atomic uint64_t sent;      /* GEN_AF_PACKET: frames the kernel
                                 * accepted. */
    const char *what;           /* The call that failed... */
    atomic_int error;           /* ...and its errno (written after
                                 * 'what'), or 0. */
};

/* The IPv4 header checksum of the 20 bytes at 'ip'. */
static void
ipv4_csum(uint8_t *ip)
{
    uint32_t sum = 0;

    ip[10] = ip[11] = 0;
    for (int i = 0; i < 20; i += 2) {
        sum += (uint32_t) (ip[i] << 8 | ip[i + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10] = (uint8_t) (~sum >> 8);
    ip[11] = (uint8_t) ~sum;
}

/* The frame: UDP/IPv4 from 10.254.0.1:1000 to 10.254.0.2:5000, 18 bytes
 * of zeros after the UDP header, IPv4 checksum filled in, UDP checksum
 * zero ("none", allowed on IPv4). */
static void
make_plain_frame(uint8_t *p)
{
    static const uint8_t head[] = {
        0x08, 0x00,                             /* IPv4. */
        0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0,
        10, 254, 0, 1, 10, 254, 0, 2,
        0x03, 0xe8, 0x13, 0x88, 0, 26, 0, 0,
    };

    memset(p, 0, VETH_FRAME_LEN);
    memcpy(p, mac_d0, 6);
    memcpy(p + 6, mac_s0, 6);
    memcpy(p + 12, head, sizeof head);
    ipv4_csum(p + 14);
}

/* The frame the generator sends, into 'p' (VETH_MAX_FRAME bytes); returns
 * its length.  With gen_vxlan, the plain frame behind Ethernet from s0 to
 * s1, IPv4 from TNL_REMOTE to TNL_LOCAL (DF, TTL 64), UDP from port 49152
 * to 4789 (checksum zero, as the kernel and Open vSwitch send VXLAN over
 * IPv4) and VXLAN with VNI TNL_VNI. */
static size_t
make_veth_frame(uint8_t *p)
{
    static const uint8_t outer[] = {
        0x08, 0x00,                             /* IPv4. */
        0x45, 0, 0, 20 + 8 + 8 + VETH_FRAME_LEN, 0, 0, 0x40, 0, 64, 17,
        0, 0, 10, 253, 0, 2, 10, 253, 0, 1,
        0xc0, 0x00, 0x12, 0xb5, 0, 8 + 8 + VETH_FRAME_LEN, 0, 0,
        0x08, 0, 0, 0, 0, 0, TNL_VNI, 0,        /* VXLAN: I flag, VNI. */
    };

    if (!gen_vxlan) {
        make_plain_frame(p);
        return VETH_FRAME_LEN;
    }
    static_assert(12 + sizeof outer == VXLAN_OUTER_LEN, "VXLAN's headers");
    memcpy(p, mac_s1, 6);
    memcpy(p + 6, mac_s0, 6);
    memcpy(p + 12, outer, sizeof outer);
    ipv4_csum(p + 14);
    make_plain_frame(p + VXLAN_OUTER_LEN);
    return VETH_MAX_FRAME;
}

static void
gen_fail(struct generator *g, const char *what, int error)
{
    g->what = what;
    atomic_store(&g->error, error);
}

#ifdef HAVE_LIBBPF
/* GEN_XDP_LIVE: the kernel runs the program that redirects to s0 on
 * LIVE_REPEAT copies of the frame per call, and transmits each. */
static void
generate_xdp_live(struct generator *g)
{
    uint8_t frame[VETH_MAX_FRAME];
    size_t len = make_veth_frame(frame);
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
                .data_size_in = (uint32_t) len, .repeat = LIVE_REPEAT,
                .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
                .batch_size = LIVE_BATCH);

    while (!atomic_load_explicit(&g->stop, memory_order_relaxed)) {
        int error = bpf_prog_test_run_opts(env.gen_prog_fd, &opts);
        if (error) {
            gen_fail(g, "BPF_PROG_TEST_RUN", -error);
            break;
        }
    }
}

#endif

/* GEN_AF_PACKET: SEND_BATCH copies of the frame per sendmmsg() on s0. */
static void
generate_af_packet(struct generator *g)
{
    uint8_t frame[VETH_MAX_FRAME];
    struct sockaddr_ll to;
    struct mmsghdr msgs[SEND_BATCH];
    struct iovec iov;
    int one = 1, fd;

    fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        gen_fail(g, "socket(AF_PACKET)", errno);
        return;
    }
    if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one)) {
        gen_fail(g, "PACKET_QDISC_BYPASS", errno);
        close(fd);
        return;
    }

    size_t len = make_veth_frame(frame);
    memset(&to, 0, sizeof to);
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_IP);
    to.sll_ifindex = env.ifindex_s0;
    to.sll_halen = 6;
    memcpy(to.sll_addr, frame, 6);
    iov.iov_base = frame;
    iov.iov_len = len;
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < SEND_BATCH; i++) {
        msgs[i].msg_hdr.msg_name = &to;
        msgs[i].msg_hdr.msg_namelen = sizeof to;
        msgs[i].msg_hdr.msg_iov = &iov;
        msgs[i].msg_hdr.msg_iovlen = 1;
    }

    while (!atomic_load_explicit(&g->stop, memory_order_relaxed)) {
        int n = sendmmsg(fd, msgs, SEND_BATCH, 0);
        if (n > 0) {
            atomic_fetch_add_explicit(&g->sent, (uint64_t) n,
                                      memory_order_relaxed);
        } else if (n < 0 && errno != ENOBUFS && errno != EAGAIN
                   && errno != EINTR) {
            /* ENOBUFS: the device queue was full (a drop, not an end). */
            gen_fail(g, "sendmmsg", errno);
            break;
        }
    }
    close(fd);
}

static void *
generator_main(void *g_)
{
    struct generator *g = g_;

    pin_thread(0);
    int error = enter_ns(env.ns_fd[NS_SRC]);
    if (error) {
        gen_fail(g, "setns(src)", error);
#ifdef HAVE_LIBBPF
    } else if (env.gen == GEN_XDP_LIVE) {
        generate_xdp_live(g);
#endif
    } else {
        generate_af_packet(g);
    }
    return NULL;
}

/* Chooses the generator: XDP live frames where the kernel has them (5.18
 * and later), which make several times more frames per second than an
 * AF_PACKET socket (docs/PERFORMANCE.md), else AF_PACKET.
 * FLOWDP_BENCH_VETH_GEN=af_packet forces the latter.  Prints the choice
 * and returns it. */
static enum veth_gen
choose_generator(void)
{
    char *why = NULL;

#ifndef HAVE_LIBBPF
    why = xasprintf("built without libbpf");
#else
    const char *force = getenv("FLOWDP_BENCH_VETH_GEN");
    if (force && !strcmp(force, "af_packet")) {
        why = xasprintf("FLOWDP_BENCH_VETH_GEN=%s", force);
    } else {
        env.gen_map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fdp_gen",
                                        sizeof(uint32_t),
                                        sizeof(struct gen_state), 1, NULL);
        if (env.gen_map_fd < 0) {
            why = xasprintf("creating its map: %s",
                            strerror(-env.gen_map_fd));
        } else {
            env.gen_prog_fd = load_generator(env.ifindex_s0, env.gen_map_fd,
                                             &why);
        }
    }
    if (env.gen_prog_fd >= 0) {
        uint8_t frame[VETH_MAX_FRAME];
        size_t len = make_veth_frame(frame);
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
                    .data_size_in = (uint32_t) len, .repeat = 1,
                    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
        int error = enter_ns(env.ns_fd[NS_SRC]);

        if (!error) {
            error = -bpf_prog_test_run_opts(env.gen_prog_fd, &opts);
            enter_ns(env.home_fd);
        }
        if (error) {
            why = xasprintf("XDP live frames: %s", strerror(error));
        }
    }
#endif

    env.gen = why ? GEN_AF_PACKET : GEN_XDP_LIVE;
    if (why && env.gen_prog_fd >= 0) {
        close(env.gen_prog_fd);
        env.gen_prog_fd = -1;
    }
    char *line = xasprintf("veth: namespaces fdpV%ld{src,fwd,dst}, "
                           "generator %s%s%s%s, sink: %s", (long) getpid(),
                           gen_name[env.gen], why ? " (" : "",
                           why ? why : "", why ? ")" : "",
                           env.sink_nl_fd >= 0
                           ? "d0's rx_packets over rtnetlink"
                           : "XDP count and drop on d0");
    if (json_output) {
        fprintf(stderr, "%s: datapath %s\n", program_name, line);
    } else {
        printf("%s\n", line);
    }
    free(line);
    free(why);
    return env.gen;
}

/* ---------------------------------------------------------------------- */
/* Forwarders.                                                             */

/* A forwarder that flowdp runs. */
struct flowdp_fwd {
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    pthread_t thread;
    bool running;
    atomic_bool stop;
};

static struct flowdp_fwd fdp_fwd;
static const char *current_case;    /* For messages from a stop(). */
static int redirect_fd = -1;

static void *
pmd_main(void *f_)
{
    struct flowdp_fwd *f = f_;

    pin_thread(-1);
    if (enter_ns(env.ns_fd[NS_FWD])) {
        return NULL;
    }
    while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
        fdp_dp_pmd_poll(f->pmd, NULL);
    }
    return NULL;
}

static char *
bridge_start(const char *type)
{
    const char *f = env.ns_name[NS_FWD];

    return run_cmd("ip -n %s link add br0 type bridge forward_delay 0 && "
                   "ip -n %s link set s1 master br0 && "
                   "ip -n %s link set d1 master br0 && "
                   "ip -n %s link set br0 up", f, f, f, f);
}

static void
bridge_stop(void)
{
    free(run_cmd("ip -n %s link del br0", env.ns_name[NS_FWD]));
}

/* The kernel's VXLAN: s1 is TNL_LOCAL, a vxlan device (VNI TNL_VNI, UDP
 * port 4789, no learning) and d1 are ports of a bridge, as a host joins
 * an overlay. */
static char *
vxlan_kernel_start(const char *type)
{
    const char *f = env.ns_name[NS_FWD];

    return run_cmd("ip -n %s addr add " TNL_LOCAL "/24 dev s1 && "
                   "ip -n %s link add vx0 type vxlan id %d local " TNL_LOCAL
                   " dstport 4789 nolearning && "
                   "ip -n %s link add br0 type bridge forward_delay 0 && "
                   "ip -n %s link set vx0 master br0 && "
                   "ip -n %s link set d1 master br0 && "
                   "ip -n %s link set vx0 up && ip -n %s link set br0 up",
                   f, f, TNL_VNI, f, f, f, f, f);
}

static void
vxlan_kernel_stop(void)
{
    const char *f = env.ns_name[NS_FWD];

    free(run_cmd("ip -n %s link del br0; ip -n %s link del vx0; "
                 "ip -n %s addr flush dev s1", f, f, f));
}

static char *
redirect_start(const char *type)
{
#ifndef HAVE_LIBBPF
    return xasprintf("built without libbpf (Debian: libbpf-dev)");
#else
    char *msg = NULL;

    redirect_fd = load_redirect(env.ifindex_d1, &msg);
    if (redirect_fd < 0) {
        return msg;
    }
    msg = attach_xdp(NS_FWD, env.ifindex_s1, "s1", redirect_fd);
    if (msg) {
        close(redirect_fd);
        redirect_fd = -1;
    }
    return msg;
#endif
}

static void
redirect_stop(void)
{
#ifdef HAVE_LIBBPF
    detach_xdp(NS_FWD, env.ifindex_s1);
#endif
    if (redirect_fd >= 0) {
        close(redirect_fd);
        redirect_fd = -1;
    }
}

/* Says so if the datapath left an XDP program on 'ifname' in fwd after
 * closing its ports, and removes it, so that the next forwarder starts
 * from bare interfaces. */
static void
check_no_xdp(const char *case_name, int ifindex, const char *ifname)
{
    uint32_t id = 0;

#ifdef HAVE_LIBBPF
    if (!enter_ns(env.ns_fd[NS_FWD])) {
        if (!bpf_xdp_query_id(ifindex, 0, &id) && id) {
            bpf_xdp_detach(ifindex, 0, NULL);
        }
        enter_ns(env.home_fd);
    }
#endif
    if (id) {
        char *msg = xasprintf("the datapath left XDP program %" PRIu32
                              " on %s after closing its ports (removed)",
                              id, ifname);
        note(case_name, "warning", msg);
        free(msg);
    }
}

/* Prints the datapath's port counters after a case, to tell where
 * frames sent but not received were lost. */
static void
flowdp_note_stats(struct flowdp_fwd *f)
{
    struct fdp_port_stats in, out;

    if (!fdp_dp_port_get_stats(f->dp, 1, &in, NULL)
        && !fdp_dp_port_get_stats(f->dp, 2, &out, NULL)) {
        char *msg = xasprintf("port 1 (s1) rx %" PRIu64 " rx_dropped %"
                              PRIu64 " rx_errors %" PRIu64 "; port 2 (d1) "
                              "tx %" PRIu64 " tx_dropped %" PRIu64,
                              in.rx_packets, in.rx_dropped, in.rx_errors,
                              out.tx_packets, out.tx_dropped);
        note(current_case, "ports", msg);
        free(msg);
    }
}

static void
flowdp_stop(void)
{
    struct flowdp_fwd *f = &fdp_fwd;

    if (f->running) {
        atomic_store(&f->stop, true);
        pthread_join(f->thread, NULL);
        f->running = false;
        flowdp_note_stats(f);
    }
    fdp_dp_pmd_destroy(f->pmd);
    fdp_dp_destroy(f->dp);
    fdp_table_destroy(f->table);
    memset(f, 0, sizeof *f);
    check_no_xdp(current_case, env.ifindex_s1, "s1");
    check_no_xdp(current_case, env.ifindex_d1, "d1");
}

/* Adds port 'port_no' = 'type':dev='ifname' in namespace fwd.  Returns
 * NULL or a message. */
static char *
flowdp_port(struct flowdp_fwd *f, uint32_t port_no, const char *type,
            const char *ifname)
{
    char *spec = xasprintf("%s:dev=%s", type, ifname);
    char *err = NULL, *msg = NULL;
    int error;

    if (!spec) {
        fatal("datapath: veth: out of memory");
    }
    error = enter_ns(env.ns_fd[NS_FWD]);
    if (!error) {
        error = fdp_dp_port_add(f->dp, port_no, spec, &err);
        enter_ns(env.home_fd);
    }
    if (error) {
        msg = xasprintf("port %" PRIu32 " %s: %s", port_no, spec,
                        err ? err : strerror(error));
    }
    free(err);
    free(spec);
    return msg;
}

/* The tunnel cases' underlay on port 1 (s1): TNL_LOCAL/24, and the VXLAN
 * port 10 to TNL_REMOTE with VNI TNL_VNI.  Returns NULL or a message. */
static char *
flowdp_tunnel(struct flowdp_fwd *f)
{
    static const char spec[] = "vxlan:remote_ip=" TNL_REMOTE ",key=42";
    struct in6_addr local;
    char *err = NULL, *msg = NULL;

    static_assert(TNL_VNI == 42, "the spec's key");
    memset(&local, 0, sizeof local);
    local.s6_addr[10] = local.s6_addr[11] = 0xff;
    inet_pton(AF_INET, TNL_LOCAL, &local.s6_addr[12]);
    int error = enter_ns(env.ns_fd[NS_FWD]);
    if (!error) {
        error = fdp_dp_addr_add(f->dp, 1, &local, 24);
        if (error) {
            msg = xasprintf("address " TNL_LOCAL "/24 on port 1: %s",
                            strerror(error));
        } else if ((error = fdp_dp_port_add(f->dp, 10, spec, &err))) {
            msg = xasprintf("port 10 %s: %s", spec,
                            err ? err : strerror(error));
        }
        enter_ns(env.home_fd);
    } else {
        msg = xasprintf("setns(fwd): %s", strerror(error));
    }
    free(err);
    return msg;
}

/* A datapath in fwd with ports 1 = TYPE:dev=s1 and 2 = TYPE:dev=d1, the
 * flow in_port=1,actions=output:2 (for the tunnel cases, port 10 and
 * in_port=10,actions=output:2: flowdp_tunnel()), and a pmd polling in
 * fwd. */
static char *
flowdp_start(const char *type)
{
    const char *flow = gen_vxlan ? "in_port=10,actions=output:2"
                                 : "in_port=1,actions=output:2";
    struct flowdp_fwd *f = &fdp_fwd;
    struct fdp_flow_spec spec;
    char *msg = NULL;
    int error;

    memset(f, 0, sizeof *f);
    if (fdp_table_create(&f->table)) {
        fatal("datapath: veth: out of memory");
    }
    if (fdp_flow_parse(flow, 0, &spec, &msg)
        || fdp_table_insert(f->table, &spec, 0)) {
        fatal("datapath: veth: %s: %s", flow, msg ? msg : "insert failed");
    }
    fdp_flow_spec_destroy(&spec);
    fdp_table_run(f->table);

    error = fdp_dp_create(f->table, NULL, &f->dp);
    if (error) {
        msg = xasprintf("creating the datapath: %s", strerror(error));
    }
    if (!msg) {
        msg = flowdp_port(f, 1, type, "s1");
    }
    if (!msg) {
        msg = flowdp_port(f, 2, type, "d1");
    }
    if (!msg && gen_vxlan) {
        msg = flowdp_tunnel(f);
    }
    if (!msg) {
        error = fdp_dp_pmd_create(f->dp, 0, &f->pmd);
        if (error) {
            msg = xasprintf("creating the pmd: %s", strerror(error));
        }
    }
    if (!msg) {
        error = pthread_create(&f->thread, NULL, pmd_main, f);
        if (error) {
            msg = xasprintf("starting the pmd thread: %s", strerror(error));
        } else {
            f->running = true;
        }
    }
    if (msg) {
        flowdp_stop();
    }
    return msg;
}

/* ---------------------------------------------------------------------- */
/* Measuring.                                                              */

/* Frames the generator has sent so far. */
static uint64_t
gen_sent(struct generator *g)
{
#ifdef HAVE_LIBBPF
    if (env.gen == GEN_XDP_LIVE) {
        struct gen_state st;
        uint32_t key = 0;

        return bpf_map_lookup_elem(env.gen_map_fd, &key, &st) ? 0 : st.sent;
    }
#endif
    return atomic_load(&g->sent);
}

struct veth_run {
    struct generator *gen;
    bool stalled;
    double rate;                    /* Received per ns, last call. */
    double sent_rate[VETH_RUNS];    /* Sent per ns, last calls. */
    unsigned int n_calls;
};

/* measure()'s operation: waits until the sink has counted 'n' more
 * frames (sleeping between reads, so that the bench's own thread takes
 * no CPU from the generator and the forwarder). */
static uint64_t
wait_received(void *r_, uint64_t n)
{
    struct veth_run *r = r_;
    uint64_t sent0 = gen_sent(r->gen);
    double t0 = now_ns(), progress_t = t0;
    uint64_t got0 = sink_read(), got = got0, target = got0 + n;

    while (!r->stalled && got < target) {
        double wait = r->rate > 0 ? (double) (target - got) / r->rate / 2
                      : 50e3;
        sleep_ns(wait < 20e3 ? 20e3 : wait > 5e6 ? 5e6 : wait);

        uint64_t now = sink_read();
        double t = now_ns();
        if (now != got) {
            progress_t = t;
            got = now;
        } else if (t - progress_t > STALL_NS) {
            r->stalled = true;
        }
    }

    double dt = now_ns() - t0;
    if (dt > 0) {
        r->rate = (double) (got - got0) / dt;
        r->sent_rate[r->n_calls++ % VETH_RUNS]
            = (double) (gen_sent(r->gen) - sent0) / dt;
    }
    return n;
}

/* A row: 'entries' is the one flow (or the kernel's one rule: forward
 * everything), 'bytes' the frame's length. */
static void
report_row(const char *case_name, const char *impl, double ns)
{
    report(&(struct result) {
        .suite = gen_vxlan ? "tunnel" : "datapath", .case_name = case_name,
        .impl = impl, .entries = 1, .ns_per_op = ns,
        .bytes = gen_vxlan ? VETH_MAX_FRAME : VETH_FRAME_LEN,
    });
}

/* Runs the generator through the forwarder that 'start' sets up, and
 * reports what reaches d0. */
static void
veth_case(const char *case_name, char *(*start)(const char *type),
          void (*stop)(void), const char *type)
{
    struct generator gen;
    struct veth_run run;
    char *msg;
    int error;

    current_case = case_name;
    msg = start(type);
    if (msg) {
        skip(case_name, msg);
        free(msg);
        return;
    }

    memset(&gen, 0, sizeof gen);
    memset(&run, 0, sizeof run);
    run.gen = &gen;
    if (env.gen == GEN_XDP_LIVE) {
        gen_state_set(0);
    }
    error = pthread_create(&gen.thread, NULL, generator_main, &gen);
    if (error) {
        stop();
        fatal("datapath: veth: starting the generator: %s", strerror(error));
    }

    /* Warm up: until the first frames arrive, then as long again. */
    double t0 = now_ns();
    uint64_t base = sink_read();
    while (sink_read() == base && now_ns() - t0 < WARMUP_NS && !gen.error) {
        sleep_ns(1e6);
    }
    bool flowing = sink_read() != base;
    if (flowing) {
        sleep_ns(now_ns() - t0);

        /* measure()'s runs last a fifth of seconds_per_case, or 20 ms
         * (2 ms with --quick) without --seconds: too short for packets
         * through the kernel (the XDP generator pauses for 25 ms between
         * calls), so without --seconds each forwarder gets 1 s (0.1 s
         * with --quick). */
        double saved_seconds = seconds_per_case;
        if (seconds_per_case <= 0) {
            seconds_per_case = quick ? 0.1 : 1.0;
        }
        double ns = measure(wait_received, &run);
        seconds_per_case = saved_seconds;
        if (!run.stalled) {
            report_row(case_name, "received", ns);

            double sent[VETH_RUNS];
            unsigned int k = run.n_calls < VETH_RUNS ? run.n_calls
                             : VETH_RUNS;
            memcpy(sent, run.sent_rate, sizeof sent);
            qsort(sent, k, sizeof sent[0], cmp_double);
            no_spread();
            report_row(case_name, "sent",
                       k && sent[k / 2] > 0 ? 1 / sent[k / 2] : 0);
        }
    }

    atomic_store(&gen.stop, true);
    if (env.gen == GEN_XDP_LIVE) {
        gen_state_set(1);
    }
    pthread_join(gen.thread, NULL);
    stop();

    if (gen.error) {
        msg = xasprintf("generator: %s: %s", gen.what, strerror(gen.error));
    } else if (!flowing) {
        msg = xasprintf("no frame reached d0 in %.0f s", WARMUP_NS / 1e9);
    } else if (run.stalled) {
        msg = xasprintf("frames stopped reaching d0 for %.0f s",
                        STALL_NS / 1e9);
    }
    if (msg) {
        skip(case_name, msg);
        free(msg);
    }
}

void
suite_datapath_veth(void)
{
    char *msg = setup();

    if (msg) {
        skip("veth", msg);
        free(msg);
    } else {
        choose_generator();
        veth_case("veth-bridge", bridge_start, bridge_stop, NULL);
        veth_case("veth-xdp-redirect", redirect_start, redirect_stop, NULL);
        veth_case("veth-afxdp", flowdp_start, flowdp_stop, "afxdp");
        veth_case("veth-afpacket", flowdp_start, flowdp_stop,
                  "afpacket");
    }
    teardown();
}

/* The tunnel suite's veth cases (flowdp-bench tunnel): the generator sends
 * VXLAN from s0, the far endpoint, to s1; the kernel's vxlan device
 * bridged to d1, then flowdp decapsulating on afxdp and on afpacket ports,
 * deliver the inner frames to d0. */
void
suite_tunnel_veth(void)
{
    char *msg = setup();

    if (msg) {
        skip("veth", msg);
        free(msg);
    } else {
        gen_vxlan = true;
        choose_generator();
        veth_case("veth-vxlan-kernel", vxlan_kernel_start, vxlan_kernel_stop,
                  NULL);
        veth_case("veth-vxlan-afxdp", flowdp_start, flowdp_stop, "afxdp");
        veth_case("veth-vxlan-afpacket", flowdp_start, flowdp_stop,
                  "afpacket");
        gen_vxlan = false;
    }
    teardown();
}
