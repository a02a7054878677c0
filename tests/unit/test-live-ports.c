/*
 * Unit tests for the live ports (datapath/port-afxdp.c,
 * datapath/port-afpacket.c), with the kernel as the peer.
 *
 * The test moves itself into a network namespace of its own (so it needs
 * root; without, it is skipped) and makes a veth pair t0-t1 there.  A
 * ring port, whose peer the test plays, injects UDP packets; flows send
 * them out of the live port on t0, the kernel carries them across the
 * pair, the live port on t1 receives them, and flows bring them back to
 * the ring port's tx ring, where the test counts them byte for byte.
 * Every pair of port types (afxdp and afpacket on either side) runs the
 * loop, with one pmd and with two on two threads.  Then the frames: once the ports are deleted (the afxdp port that
 * created the UMEM first, so that its frames are parked until the last
 * afxdp port goes), every frame of the datapath is back in the pool,
 * and that first port's queue can be bound again only then.  Native XDP
 * on veth, generic on lo, as fdp_dp_port_describe() reports.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flowdp/flowdp.h"
#include "unit.h"

#define N_FRAMES 4096
#define N_PACKETS 300
#define BURST 20

/* Whether the packets of the test running carry an 802.1Q tag (VLAN
 * 100, priority 5) between the MACs and the EtherType. */
static bool tagged;

/* Bytes before the payload: Ethernet (and the tag), IPv4, UDP. */
static size_t
head_size(void)
{
    return 42 + (tagged ? 4 : 0);
}

/* A UDP/IPv4 broadcast packet numbered 'seq' (in its payload), tagged if
 * 'tagged'. */
static size_t
make_packet(uint8_t *p, uint32_t seq)
{
    static const uint8_t eth[] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,  /* MACs */
    };
    static const uint8_t tag[] = { 0x81, 0x00, 0xa0, 100 };
    static const uint8_t head[] = {
        0x08, 0x00,                                            /* IPv4 */
        0x45, 0, 0, 40, 0, 0, 0, 0, 64, 17, 0, 0,
        10, 0, 0, 1, 10, 0, 0, 2,
        0x30, 0x39, 0x30, 0x39, 0, 20, 0, 0,                   /* UDP */
    };
    size_t n = 0;

    memcpy(p, eth, sizeof eth);
    n += sizeof eth;
    if (tagged) {
        memcpy(p + n, tag, sizeof tag);
        n += sizeof tag;
    }
    memcpy(p + n, head, sizeof head);
    n += sizeof head;
    memcpy(p + n, "fdpX", 4);
    memcpy(p + n + 4, &seq, sizeof seq);
    memset(p + n + 8, 0x5a, 4);
    return n + 12;
}


/* test_peer_drain()'s view of our packets: 'seen' marked, and counted. */
struct drain_aux {
    bool *seen;
    uint32_t ours;
};

static void
mark_ours(void *aux_, const uint8_t *p, uint32_t len)
{
    struct drain_aux *aux = aux_;
    uint8_t want[72];
    uint32_t seq;
    size_t off = head_size();

    if (len >= off + 8 && !memcmp(p + off, "fdpX", 4)) {
        memcpy(&seq, p + off + 4, sizeof seq);
        ck_assert_uint_lt(seq, N_PACKETS);
        size_t n = make_packet(want, seq);
        ck_assert_uint_eq(len, n);
        ck_assert(!memcmp(p, want, n));
        ck_assert_msg(!aux->seen[seq], "packet %" PRIu32 " twice", seq);
        aux->seen[seq] = true;
        aux->ours++;
    }
}

/* Takes what the ring port sent; marks each of our packets in 'seen'
 * (checking its bytes) and returns how many there were. */
static uint32_t
peer_drain(const struct fdp_port_rings *r, bool *seen)
{
    struct drain_aux aux = { .seen = seen, .ours = 0 };

    test_peer_drain(r, mark_ours, &aux);
    return aux.ours;
}

static void
add_flow(struct fdp_table *t, const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    ck_assert_msg(!fdp_flow_parse(text, 0, &spec, &error), "%s: %s", text,
                  error);
    ck_assert_int_eq(fdp_table_insert(t, &spec, 0), 0);
    fdp_flow_spec_destroy(&spec);
}

static double
now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The second pmd of a two-pmd loop, polling on its own thread until told
 * to stop. */
struct second_pmd {
    struct fdp_dp_pmd *pmd;
    bool stop;
};

static void *
second_pmd_main(void *sp_)
{
    struct second_pmd *sp = sp_;

    while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
        if (!fdp_dp_pmd_poll(sp->pmd, NULL)) {
            struct timespec nap = { 0, 20 * 1000 };
            nanosleep(&nap, NULL);
        }
    }
    return NULL;
}

/* Ring port 3 -> 'out' on t0 -> the kernel -> 'in' on t1 -> ring port 3,
 * with 'n_pmds' pmds: with 2, a second thread polls port 2 ('in') and
 * transmits to the ring port while this one polls ports 1 and 3. */
static void
loop_through_pmds(const char *out, const char *in, unsigned int n_pmds)
{
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_dp_options o;
    struct fdp_port_rings ring;
    struct fdp_dp_stats st;
    char *error = NULL;
    static bool seen[N_PACKETS];
    uint8_t pkt[72];

    memset(seen, 0, sizeof seen);
    ck_assert_int_eq(fdp_table_create(&table), 0);
    fdp_dp_options_init(&o);
    o.n_frames = N_FRAMES;
    o.n_pmds = n_pmds;
    ck_assert_int_eq(fdp_dp_create(table, &o, &dp), 0);
    ck_assert_msg(!fdp_dp_port_add(dp, 1, out, &error), "%s: %s", out,
                  error);
    ck_assert_msg(!fdp_dp_port_add(dp, 2, in, &error), "%s: %s", in, error);
    /* Room for every packet on its tx ring: with two pmds, port 2's may
     * transmit them all while this thread is not draining. */
    ck_assert_int_eq(fdp_dp_port_add(dp, 3, "ring:size=512", &error), 0);
    ck_assert_int_eq(fdp_dp_port_rings(dp, 3, &ring), 0);
    add_flow(table, "in_port=3,actions=output:1");
    add_flow(table, "udp,in_port=2,tp_dst=12345,actions=output:3");
    ck_assert_int_eq(fdp_dp_pmd_create(dp, 0, &pmd), 0);
    struct second_pmd second = { .pmd = NULL, .stop = false };
    pthread_t thread;
    if (n_pmds == 2) {
        ck_assert_int_eq(fdp_dp_pmd_create(dp, 1, &second.pmd), 0);
        ck_assert_int_eq(pthread_create(&thread, NULL, second_pmd_main,
                                        &second), 0);
    }

    uint32_t sent = 0, got = 0;
    double deadline = now_sec() + 10;
    while (got < N_PACKETS && now_sec() < deadline) {
        for (int i = 0; i < BURST && sent < N_PACKETS; i++) {
            size_t len = make_packet(pkt, sent);
            if (!test_peer_send(&ring, pkt, len)) {
                break;
            }
            sent++;
        }
        fdp_dp_pmd_poll(pmd, NULL);
        got += peer_drain(&ring, seen);
        if (sent == N_PACKETS) {
            struct timespec nap = { 0, 100 * 1000 };
            nanosleep(&nap, NULL);
        }
    }
    if (n_pmds == 2) {
        __atomic_store_n(&second.stop, true, __ATOMIC_RELEASE);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        fdp_dp_pmd_destroy(second.pmd);
    }
    char err1[200], err2[200];
    struct fdp_port_stats ps, ps1, ps2, ps3;
    fdp_dp_port_get_error(dp, 1, err1, sizeof err1);
    fdp_dp_port_get_error(dp, 2, err2, sizeof err2);
    fdp_dp_port_get_stats(dp, 1, &ps1, NULL);
    fdp_dp_port_get_stats(dp, 2, &ps2, NULL);
    fdp_dp_port_get_stats(dp, 3, &ps3, NULL);
    ck_assert_msg(got == N_PACKETS, "%s -> %s: %" PRIu32 " of %d packets "
                  "came back (port 1 tx %" PRIu64 " dropped %" PRIu64
                  ", port 2 rx %" PRIu64 " errors %" PRIu64 ", port 3 tx %"
                  PRIu64 " dropped %" PRIu64 "; errors: \"%s\", \"%s\")",
                  out, in, got, N_PACKETS, ps1.tx_packets, ps1.tx_dropped,
                  ps2.rx_packets, ps2.rx_errors, ps3.tx_packets,
                  ps3.tx_dropped, err1, err2);

    ck_assert_int_eq(fdp_dp_port_get_stats(dp, 1, &ps, NULL), 0);
    ck_assert_uint_eq(ps.tx_packets, N_PACKETS);
    ck_assert_uint_eq(ps.tx_dropped, 0);
    ck_assert_int_eq(fdp_dp_port_get_stats(dp, 2, &ps, NULL), 0);
    ck_assert_uint_ge(ps.rx_packets, N_PACKETS);
    ck_assert_uint_eq(ps.rx_errors, 0);

    /* Frames: the kernel holds some while the ports are open; deleting
     * the ports (port 1 first: the afxdp port that made the UMEM, when it
     * is one) takes them all back. */
    fdp_dp_pmd_destroy(pmd);
    fdp_dp_get_stats(dp, &st);
    ck_assert_uint_lt(st.n_frames_free, N_FRAMES);
    for (uint32_t p = 1; p <= 3; p++) {
        ck_assert_int_eq(fdp_dp_port_del(dp, p), 0);
    }
    fdp_dp_get_stats(dp, &st);
    ck_assert_uint_eq(st.n_frames_free, N_FRAMES);
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}

static void
loop_through(const char *out, const char *in)
{
    loop_through_pmds(out, in, 1);
}

START_TEST(afxdp_to_afxdp)
{
    loop_through("afxdp:dev=t0", "afxdp:dev=t1");
}
END_TEST

START_TEST(afxdp_copy_to_afxdp_copy)
{
    loop_through("afxdp:dev=t0,mode=copy", "afxdp:dev=t1,mode=copy");
}
END_TEST

START_TEST(afpacket_to_afpacket)
{
    loop_through("afpacket:dev=t0", "afpacket:dev=t1");
}
END_TEST

START_TEST(afxdp_to_afpacket)
{
    loop_through("afxdp:dev=t0", "afpacket:dev=t1");
}
END_TEST

START_TEST(afpacket_to_afxdp)
{
    loop_through("afpacket:dev=t0", "afxdp:dev=t1");
}
END_TEST

/* Two pmds: port 2's receives and transmits to the ring port, the other
 * receives from it and transmits on port 1, concurrently. */
START_TEST(two_pmds)
{
    loop_through_pmds("afxdp:dev=t0", "afxdp:dev=t1", 2);
    loop_through_pmds("afpacket:dev=t0", "afpacket:dev=t1", 2);
    loop_through_pmds("afpacket:dev=t0", "afxdp:dev=t1", 2);
}
END_TEST

/* The kernel takes a VLAN tag off into the packet socket's metadata; the
 * afpacket port puts it back, so the packet comes back as it was sent. */
START_TEST(vlan_tag_kept)
{
    tagged = true;
    loop_through("afxdp:dev=t0", "afpacket:dev=t1");
    loop_through("afpacket:dev=t0", "afxdp:dev=t1");
    loop_through("afpacket:dev=t0", "afpacket:dev=t1");
    tagged = false;
}
END_TEST

/* The first afxdp port's queue stays bound to the UMEM until the last
 * afxdp port closes: adding a port there before is refused with that
 * reason, after it works again. */
START_TEST(first_queue_parked)
{
    struct fdp_table *table;
    struct fdp_dp *dp;
    char *error = NULL;

    ck_assert_int_eq(fdp_table_create(&table), 0);
    ck_assert_int_eq(fdp_dp_create(table, NULL, &dp), 0);
    ck_assert_msg(!fdp_dp_port_add(dp, 1, "afxdp:dev=t0", &error), "%s",
                  error);
    ck_assert_msg(!fdp_dp_port_add(dp, 2, "afxdp:dev=t1", &error), "%s",
                  error);
    ck_assert_int_eq(fdp_dp_port_del(dp, 1), 0);
    ck_assert_int_eq(fdp_dp_port_add(dp, 1, "afxdp:dev=t0", &error), EBUSY);
    ck_assert_msg(strstr(error, "afxdp: dev=t0,queue=0: the datapath's UMEM "
                         "still holds that queue"), "%s", error);
    free(error);
    error = NULL;
    ck_assert_int_eq(fdp_dp_port_del(dp, 2), 0);
    ck_assert_msg(!fdp_dp_port_add(dp, 1, "afxdp:dev=t0", &error), "%s",
                  error);
    ck_assert_msg(!fdp_dp_port_add(dp, 2, "afxdp:dev=t1", &error), "%s",
                  error);
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}
END_TEST

/* Native XDP where the driver has it (veth), generic where not (lo), as
 * fdp_dp_port_describe() reports; mode=copy likewise; afpacket ports have
 * nothing to describe. */
START_TEST(xdp_modes)
{
    static const struct {
        const char *spec;
        const char *mode;
    } cases[] = {
        { "afxdp:dev=t0", ", native mode; copy" },
        { "afxdp:dev=lo", ", generic mode; copy" },
        { "afxdp:dev=lo,mode=copy", ", generic mode; copy" },
        { "afxdp:dev=t1,mode=copy", ", native mode; copy" },
        { "afpacket:dev=t0", "" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fdp_table *table;
        struct fdp_dp *dp;
        char *error = NULL, what[200];
        ck_assert_int_eq(fdp_table_create(&table), 0);
        ck_assert_int_eq(fdp_dp_create(table, NULL, &dp), 0);
        ck_assert_msg(!fdp_dp_port_add(dp, 1, cases[i].spec, &error),
                      "%s: %s", cases[i].spec, error);
        ck_assert_int_eq(fdp_dp_port_describe(dp, 1, what, sizeof what), 0);
        if (cases[i].mode[0]) {
            ck_assert_msg(!strncmp(what, "XDP program xsk_def_prog (id ", 29)
                          && strstr(what, cases[i].mode), "%s: %s",
                          cases[i].spec, what);
        } else {
            ck_assert_str_eq(what, "");
        }
        ck_assert_int_eq(fdp_dp_port_describe(dp, 2, what, sizeof what),
                         ENOENT);
        fdp_dp_destroy(dp);
        fdp_table_destroy(table);
    }
}
END_TEST

/* Closing the datapath with live ports open (no port_del) gives every
 * socket back and takes the XDP program off: the next test's ports can
 * bind the same queues. */
START_TEST(destroy_with_ports_open)
{
    for (int round = 0; round < 3; round++) {
        struct fdp_table *table;
        struct fdp_dp *dp;
        char *error = NULL;
        ck_assert_int_eq(fdp_table_create(&table), 0);
        ck_assert_int_eq(fdp_dp_create(table, NULL, &dp), 0);
        ck_assert_msg(!fdp_dp_port_add(dp, 1, "afxdp:dev=t0", &error), "%s",
                      error);
        ck_assert_msg(!fdp_dp_port_add(dp, 2, "afxdp:dev=t1", &error), "%s",
                      error);
        ck_assert_msg(!fdp_dp_port_add(dp, 3, "afpacket:dev=t1", &error),
                      "%s", error);
        fdp_dp_destroy(dp);
        fdp_table_destroy(table);
    }
}
END_TEST

/* A datapath whose afxdp ports were opened in another network namespace
 * than the thread that closes it: the XDP programs come off the ports'
 * interfaces anyway.  (libxdp detaches by interface index, in the
 * calling thread's namespace: closed from here, the index named another
 * interface or none, and the programs stayed.)  The other namespace has
 * its own veth pair, u0 and u1, whose indices are those of t0 and t1
 * here. */
struct other_ns {
    int ns_fd;
    struct fdp_dp *dp;
    char *error;
    int has_xdp;                /* 'ip link' in the other namespace. */
};

static void *
open_in_other_ns(void *o_)
{
    struct other_ns *o = o_;

    if (unshare(CLONE_NEWNET) < 0
        || system("ip link add u0 type veth peer name u1 "
                  "&& ip link set u0 up && ip link set u1 up")) {
        o->error = strdup("cannot make the second namespace");
        return NULL;
    }
    o->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (fdp_dp_port_add(o->dp, 1, "afxdp:dev=u0", &o->error)
        || fdp_dp_port_add(o->dp, 2, "afxdp:dev=u1", &o->error)) {
        return NULL;
    }
    return NULL;
}

static void *
look_in_other_ns(void *o_)
{
    struct other_ns *o = o_;

    if (setns(o->ns_fd, CLONE_NEWNET)) {
        o->has_xdp = -1;
        return NULL;
    }
    o->has_xdp = !system("ip link show | grep -q 'prog/xdp'");
    system("ip link del u0");
    return NULL;
}

START_TEST(destroy_from_another_namespace)
{
    struct fdp_table *table;
    struct other_ns o = { .ns_fd = -1 };
    pthread_t t;

    ck_assert_int_eq(fdp_table_create(&table), 0);
    ck_assert_int_eq(fdp_dp_create(table, NULL, &o.dp), 0);
    ck_assert_int_eq(pthread_create(&t, NULL, open_in_other_ns, &o), 0);
    pthread_join(t, NULL);
    ck_assert_msg(!o.error, "%s", o.error);
    fdp_dp_destroy(o.dp);       /* Here, not where the ports are. */
    ck_assert_int_eq(pthread_create(&t, NULL, look_in_other_ns, &o), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(o.has_xdp, 0);
    close(o.ns_fd);
    fdp_table_destroy(table);
}
END_TEST

int
main(void)
{
    if (geteuid() != 0) {
        printf("test-live-ports: skipped: needs root (a network namespace, "
               "a veth pair, AF_XDP and AF_PACKET sockets)\n");
        return 77;
    }
    if (unshare(CLONE_NEWNET) < 0) {
        printf("test-live-ports: skipped: the kernel refuses a network "
               "namespace: %s\n", strerror(errno));
        return 77;
    }
    /* In the new namespace: nothing speaks IPv6 (no solicitations of the
     * kernel's own on the pair); checksums are the test's own. */
    if (system("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 "
               "net.ipv6.conf.all.disable_ipv6=1 "
               "&& ip link set lo up "
               "&& ip link add t0 type veth peer name t1 "
               "&& ip link set t0 up && ip link set t1 up")) {
        printf("test-live-ports: skipped: cannot make a veth pair\n");
        return 77;
    }

    Suite *s = suite_create("live-ports");
    TCase *tc = unit_tcase(s, "live-ports");
    tcase_add_test(tc, afxdp_to_afxdp);
    tcase_add_test(tc, afxdp_copy_to_afxdp_copy);
    tcase_add_test(tc, afpacket_to_afpacket);
    tcase_add_test(tc, afxdp_to_afpacket);
    tcase_add_test(tc, afpacket_to_afxdp);
    tcase_add_test(tc, two_pmds);
    tcase_add_test(tc, vlan_tag_kept);
    tcase_add_test(tc, first_queue_parked);
    tcase_add_test(tc, xdp_modes);
    tcase_add_test(tc, destroy_with_ports_open);
    tcase_add_test(tc, destroy_from_another_namespace);
    return unit_run(s);
}
