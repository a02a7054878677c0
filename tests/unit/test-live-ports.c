/*
 * Unit tests for the live ports (datapath/port-afxdp.c,
 * datapath/port-afpacket.c), with the kernel as the peer.
 *
 * First, as any user, the offloads a live port finishes
 * (datapath/port-offload.c): partial checksums completed and GSO packets
 * cut, on hand-built packets, against a byte-by-byte reference.
 *
 * Then the test moves itself into a network namespace of its own (so it
 * needs root; without, the live part is skipped) and makes a veth pair
 * t0-t1 there.  A
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
#include <arpa/inet.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "datapath/port-offload.h"
#include <flowdp/flowdp.h>
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


/* unit_peer_drain()'s view of our packets: 'seen' marked, and counted. */
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

    unit_peer_drain(r, mark_ours, &aux);
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
            if (!unit_peer_send(&ring, pkt, len)) {
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
        { "afxdp:dev=t0", ", native mode; copy; 0 partial checksums "
                          "completed" },
        { "afxdp:dev=lo", ", generic mode; copy; 0 partial" },
        { "afxdp:dev=lo,mode=copy", ", generic mode; copy; 0 partial" },
        { "afxdp:dev=t1,mode=copy,csum=off",
          ", native mode; copy; checksums as received" },
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
            ck_assert_str_eq(what, "virtio-net header; 0 partial checksums "
                             "completed, 0 GSO packets cut into 0 "
                             "segments");
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

/* ---------------------------------------------------------------------- */
/* Offloads (datapath/port-offload.c), on hand-built packets, against a
 * byte-by-byte reference.  No kernel needed: these run as any user. */

/* RFC 1071, one byte at a time: big-endian 16-bit words, an odd last byte
 * padded with zero, end-around carry after every addition. */
static uint16_t
ref_sum(const uint8_t *p, size_t n, uint32_t s)
{
    for (size_t i = 0; i < n; i++) {
        s += i % 2 ? p[i] : (uint32_t) p[i] << 8;
        s = (s & 0xffff) + (s >> 16);
    }
    return (uint16_t) s;
}

struct tpkt {
    uint8_t b[70000];
    size_t len, l3, l4, field, l4_len;
    bool v6;
    uint8_t proto;
};

static uint16_t
tget16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static void
tput16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

/* The pseudo-header's sum of 't' for an L4 length of 'l4_len'. */
static uint16_t
ref_pseudo(const uint8_t *ip, bool v6, uint8_t proto, size_t l4_len)
{
    uint32_t s = ref_sum(ip + (v6 ? 8 : 12), v6 ? 32 : 8, 0);
    uint8_t tail[4] = { 0, proto, (uint8_t) (l4_len >> 8),
                        (uint8_t) l4_len };

    s = ref_sum(tail, 4, s);
    if (l4_len > 0xffff) {
        s = ref_sum((const uint8_t[]) { 0, 1 }, 2, s);
    }
    return (uint16_t) s;
}

/* Whether the L4 checksum of the packet with IP header 'ip' and L4 'l4'
 * of 'l4_len' bytes verifies. */
static bool
ref_verify(const uint8_t *ip, bool v6, uint8_t proto, const uint8_t *l4,
           size_t l4_len)
{
    return ref_sum(l4, l4_len, ref_pseudo(ip, v6, proto, l4_len)) == 0xffff;
}

/* Builds in 't' a TCP or UDP packet over IPv4 or IPv6 with 'payload'
 * random bytes (from 'seed'), an 802.1Q tag if 'tag', and a correct L4
 * checksum. */
static void
tpkt_build(struct tpkt *t, bool v6, uint8_t proto, size_t payload,
           bool tag, unsigned int *seed)
{
    size_t hl = proto == 6 ? 20 : 8;
    size_t n = 12;

    memset(t->b, 0, sizeof t->b);
    memcpy(t->b, (const uint8_t[]) { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 },
           12);
    if (tag) {
        memcpy(t->b + n, (const uint8_t[]) { 0x81, 0, 0, 7 }, 4);
        n += 4;
    }
    tput16(t->b + n, v6 ? 0x86dd : 0x0800);
    t->l3 = n + 2;
    t->v6 = v6;
    t->proto = proto;
    t->l4_len = hl + payload;
    uint8_t *ip = t->b + t->l3;
    if (v6) {
        ip[0] = 0x60;
        tput16(ip + 4, (uint16_t) t->l4_len);
        ip[6] = proto;
        ip[7] = 64;
        for (int i = 8; i < 40; i++) {
            ip[i] = (uint8_t) rand_r(seed);
        }
        t->l4 = t->l3 + 40;
    } else {
        ip[0] = 0x45;
        tput16(ip + 2, (uint16_t) (20 + t->l4_len));
        tput16(ip + 4, (uint16_t) rand_r(seed));
        tput16(ip + 6, 0x4000);                 /* DF */
        ip[8] = 64;
        ip[9] = proto;
        for (int i = 12; i < 20; i++) {
            ip[i] = (uint8_t) rand_r(seed);
        }
        tput16(ip + 10, (uint16_t) ~ref_sum(ip, 20, 0));
        t->l4 = t->l3 + 20;
    }
    uint8_t *l4 = t->b + t->l4;
    for (size_t i = 0; i < hl + payload; i++) {
        l4[i] = (uint8_t) rand_r(seed);
    }
    if (proto == 6) {
        l4[12] = 5 << 4;
        l4[13] = 0x18;                          /* PSH, ACK */
        t->field = t->l4 + 16;
    } else {
        tput16(l4 + 4, (uint16_t) t->l4_len);
        t->field = t->l4 + 6;
    }
    t->len = t->l4 + t->l4_len;
    tput16(t->b + t->field, 0);
    uint16_t c = (uint16_t) ~ref_sum(l4, t->l4_len,
                                     ref_pseudo(ip, v6, proto, t->l4_len));
    tput16(t->b + t->field, c ? c : 0xffff);
    ck_assert(ref_verify(ip, v6, proto, l4, t->l4_len));
}

/* What an offloading sender leaves: the pseudo-header sum in the field. */
static void
tpkt_make_partial(struct tpkt *t)
{
    tput16(t->b + t->field, ref_pseudo(t->b + t->l3, t->v6, t->proto,
                                       t->l4_len));
}

static struct tpkt tp_good, tp_work;

START_TEST(csum_complete_matches_reference)
{
    unsigned int seed = 22;

    for (int iter = 0; iter < 800; iter++) {
        bool v6 = iter & 1, tag = iter & 4;
        uint8_t proto = iter & 2 ? 17 : 6;
        size_t payload = iter < 40 ? (size_t) iter
                                   : (size_t) rand_r(&seed) % 1501;
        tpkt_build(&tp_good, v6, proto, payload, tag, &seed);
        size_t len = tp_good.len;

        /* With the kernel's offsets (afpacket). */
        tp_work = tp_good;
        tpkt_make_partial(&tp_work);
        ck_assert_int_eq(fdp__csum_complete(tp_work.b, len, tp_good.l4,
                                            tp_good.field - tp_good.l4), 0);
        ck_assert_msg(!memcmp(tp_work.b, tp_good.b, len), "iteration %d",
                      iter);

        /* From the bytes alone (afxdp). */
        tp_work = tp_good;
        tpkt_make_partial(&tp_work);
        bool partial_verifies = ref_verify(tp_work.b + tp_work.l3, v6, proto,
                                           tp_work.b + tp_work.l4,
                                           tp_work.l4_len);
        ck_assert(fdp__csum_complete_guess(tp_work.b, len)
                  == !partial_verifies);
        ck_assert(!memcmp(tp_work.b, tp_good.b, len) || partial_verifies);

        /* A correct checksum is never touched. */
        tp_work = tp_good;
        ck_assert(!fdp__csum_complete_guess(tp_work.b, len));
        ck_assert(!memcmp(tp_work.b, tp_good.b, len));

        /* Nor a wrong one that is not a pseudo-header sum. */
        tp_work.b[len - 1] ^= 0x40;
        uint16_t pseudo = ref_pseudo(tp_work.b + tp_work.l3, v6, proto,
                                     tp_work.l4_len);
        if (tget16(tp_work.b + tp_work.field) != pseudo) {
            memcpy(tp_good.b, tp_work.b, len);
            ck_assert(!fdp__csum_complete_guess(tp_work.b, len));
            ck_assert(!memcmp(tp_work.b, tp_good.b, len));
        }
    }
}
END_TEST

START_TEST(csum_complete_refuses_bad_offsets)
{
    uint8_t p[60], q[60];

    for (size_t i = 0; i < sizeof p; i++) {
        p[i] = (uint8_t) (i * 7);
    }
    memcpy(q, p, sizeof p);
    ck_assert_int_eq(fdp__csum_complete(p, 60, 60, 0), EINVAL);
    ck_assert_int_eq(fdp__csum_complete(p, 60, 58, 1), EINVAL);
    ck_assert_int_eq(fdp__csum_complete(p, 60, 10, 49), EINVAL);
    ck_assert_int_eq(fdp__csum_complete(p, 60, SIZE_MAX, 2), EINVAL);
    ck_assert_int_eq(fdp__csum_complete(p, 60, 2, SIZE_MAX), EINVAL);
    ck_assert(!memcmp(p, q, sizeof p));
    /* The last two bytes: the field covers itself, as a NIC's would. */
    p[58] = p[59] = 0;          /* The sum it starts from. */
    ck_assert_int_eq(fdp__csum_complete(p, 60, 10, 48), 0);
    ck_assert_uint_eq(ref_sum(p + 10, 50, 0), 0xffff);
}
END_TEST

START_TEST(csum_guess_leaves_others_alone)
{
    unsigned int seed = 5;

    /* A fragment with a field that looks partial. */
    tpkt_build(&tp_good, false, 6, 100, false, &seed);
    tpkt_make_partial(&tp_good);
    tput16(tp_good.b + tp_good.l3 + 6, 0x2000);        /* MF */
    tp_work = tp_good;
    ck_assert(!fdp__csum_complete_guess(tp_work.b, tp_work.len));
    ck_assert(!memcmp(tp_work.b, tp_good.b, tp_good.len));
    /* ICMP (not TCP or UDP). */
    tput16(tp_good.b + tp_good.l3 + 6, 0);
    tp_good.b[tp_good.l3 + 9] = 1;
    tp_work = tp_good;
    ck_assert(!fdp__csum_complete_guess(tp_work.b, tp_work.len));
    ck_assert(!memcmp(tp_work.b, tp_good.b, tp_good.len));
    /* IP's length beyond the frame; every truncation of the frame. */
    tp_good.b[tp_good.l3 + 9] = 6;
    for (size_t len = 0; len < tp_good.len; len++) {
        tp_work = tp_good;
        ck_assert(!fdp__csum_complete_guess(tp_work.b, len));
        ck_assert(!memcmp(tp_work.b, tp_good.b, tp_good.len));
    }
    /* The whole frame, for contrast, is completed. */
    ck_assert(fdp__csum_complete_guess(tp_good.b, tp_good.len));
}
END_TEST

/* Cuts a super-packet of 'payload' bytes into 'mss'-byte segments and
 * checks each against the reference: lengths, IPv4 ID and header
 * checksum, TCP sequence and flags, L4 checksum, payload bytes. */
static void
check_gso(bool v6, uint8_t proto, size_t payload, size_t mss, bool tag,
          unsigned int *seed)
{
    static uint8_t seg[4096];
    struct virtio_net_hdr vh = {
        .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
        .gso_type = proto == 17 ? VIRTIO_NET_HDR_GSO_UDP_L4
                    : v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4,
        .gso_size = (uint16_t) mss,
    };
    struct fdp__gso gso;
    const char *why = NULL;
    size_t hl = proto == 6 ? 20 : 8;

    tpkt_build(&tp_good, v6, proto, payload, tag, seed);
    if (proto == 6) {
        tp_good.b[tp_good.l4 + 13] = 0x80 | 0x18 | 0x01;   /* CWR PSH ACK FIN */
    }
    tpkt_make_partial(&tp_good);
    vh.csum_start = (uint16_t) tp_good.l4;
    vh.csum_offset = (uint16_t) (tp_good.field - tp_good.l4);
    ck_assert_msg(!fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh,
                                 sizeof seg, &why), "%s", why);
    uint32_t want = payload ? (uint32_t) ((payload + mss - 1) / mss) : 1;
    ck_assert_uint_eq(gso.n_segs, want);

    size_t hdr = tp_good.l4 + hl, done = 0;
    for (uint32_t i = 0; i < gso.n_segs; i++) {
        size_t len = fdp__gso_segment(&gso, i, seg);
        size_t plen = len - hdr;
        uint8_t *ip = seg + tp_good.l3, *l4 = seg + tp_good.l4;

        ck_assert_uint_eq(plen, payload - done < mss ? payload - done : mss);
        ck_assert(!memcmp(seg + hdr, tp_good.b + hdr + done, plen));
        ck_assert(!memcmp(seg, tp_good.b, tp_good.l3));
        if (v6) {
            ck_assert_uint_eq(tget16(ip + 4), len - tp_good.l3 - 40);
        } else {
            ck_assert_uint_eq(tget16(ip + 2), len - tp_good.l3);
            ck_assert_uint_eq(tget16(ip + 4),
                              (uint16_t) (tget16(tp_good.b + tp_good.l3 + 4)
                                          + i));
            ck_assert_uint_eq(ref_sum(ip, 20, 0), 0xffff);
        }
        if (proto == 6) {
            uint32_t seq0 = (uint32_t) tget16(tp_good.b + tp_good.l4 + 4) << 16
                            | tget16(tp_good.b + tp_good.l4 + 6);
            uint32_t seq = (uint32_t) tget16(l4 + 4) << 16 | tget16(l4 + 6);
            uint8_t flags = 0x10 | (i == 0 ? 0x80 : 0)
                            | (i + 1 == gso.n_segs ? 0x09 : 0);
            ck_assert_uint_eq(seq, seq0 + (uint32_t) done);
            ck_assert_uint_eq(l4[13], flags);
        } else {
            ck_assert_uint_eq(tget16(l4 + 4), len - tp_good.l4);
        }
        ck_assert(ref_verify(ip, v6, proto, l4, len - tp_good.l4));
        done += plen;
    }
    ck_assert_uint_eq(done, payload);
}

START_TEST(gso_segments_match_reference)
{
    static const size_t payloads[] = { 0, 1, 1447, 1448, 1449, 5000, 65000 };
    unsigned int seed = 7;

    for (size_t i = 0; i < sizeof payloads / sizeof *payloads; i++) {
        for (int k = 0; k < 8; k++) {
            check_gso(k & 1, k & 2 ? 17 : 6, payloads[i],
                      k & 4 ? 1448 : 500 + (size_t) rand_r(&seed) % 900,
                      k & 4, &seed);
        }
    }
}
END_TEST

START_TEST(gso_refuses_what_it_cannot_cut)
{
    unsigned int seed = 9;
    struct fdp__gso gso;
    const char *why;

    tpkt_build(&tp_good, false, 6, 3000, false, &seed);
    struct virtio_net_hdr ok = {
        .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
        .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .gso_size = 1448,
        .csum_start = (uint16_t) tp_good.l4, .csum_offset = 16,
    }, vh;
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &ok, 2048,
                                   &why), 0);
    vh = ok;
    vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;                  /* UFO */
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh, 2048,
                                   &why), EOPNOTSUPP);
    vh = ok;
    vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;                /* Not IPv6. */
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh, 2048,
                                   &why), EINVAL);
    vh = ok;
    vh.gso_size = 0;
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh, 2048,
                                   &why), EINVAL);
    vh = ok;
    vh.flags = 0;
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh, 2048,
                                   &why), EINVAL);
    vh = ok;
    vh.csum_start += 4;                                    /* Not at L4. */
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &vh, 2048,
                                   &why), EINVAL);
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &ok, 1000,
                                   &why), EINVAL);         /* Frame too small. */
    for (size_t len = 0; len < tp_good.l4 + 20; len++) {
        ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, len, &ok, 2048,
                                       &why), EINVAL);
    }
    tp_good.b[tp_good.l4 + 12] = 4 << 4;                   /* doff 4 */
    ck_assert_int_eq(fdp__gso_init(&gso, tp_good.b, tp_good.len, &ok, 2048,
                                   &why), EINVAL);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Offloads from the kernel: a packet socket with PACKET_VNET_HDR on t0
 * sends what an offloading stack sends (a partial checksum, a TSO
 * super-packet); the live port on t1 must hand the datapath complete,
 * MTU-sized packets. */

#define OFF_MAX 32

struct off_aux {
    uint32_t n;
    uint8_t pkt[OFF_MAX][2048];
    uint32_t len[OFF_MAX];
};

static void
off_collect(void *aux_, const uint8_t *p, uint32_t len)
{
    struct off_aux *aux = aux_;

    if (aux->n < OFF_MAX && len <= sizeof aux->pkt[0]) {
        memcpy(aux->pkt[aux->n], p, len);
        aux->len[aux->n++] = len;
    }
}

/* Sends 't' out of t0 through 'fd', with a virtio-net header asking for
 * checksum completion and, if 'gso_type' is not NONE, segmentation into
 * 'mss'-byte segments. */
static void
off_send(int fd, const struct tpkt *t, uint8_t gso_type, uint16_t mss)
{
    static uint8_t buf[sizeof(struct virtio_net_hdr) + sizeof t->b];
    struct virtio_net_hdr vh = {
        .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
        .gso_type = gso_type,
        .gso_size = mss,
        .hdr_len = (uint16_t) (t->l4 + (t->proto == 6 ? 20 : 8)),
        .csum_start = (uint16_t) t->l4,
        .csum_offset = (uint16_t) (t->field - t->l4),
    };
    struct sockaddr_ll sll = {
        .sll_family = AF_PACKET,
        .sll_ifindex = (int) if_nametoindex("t0"),
        .sll_protocol = htons(t->v6 ? ETH_P_IPV6 : ETH_P_IP),
    };

    memcpy(buf, &vh, sizeof vh);
    memcpy(buf + sizeof vh, t->b, t->len);
    ck_assert_msg(sendto(fd, buf, sizeof vh + t->len, 0,
                         (struct sockaddr *) &sll, sizeof sll)
                  == (ssize_t) (sizeof vh + t->len), "sendto: %s",
                  strerror(errno));
}

/* The super-packets sent, for checking the segments against. */
static struct tpkt off_sent[4];

static void
offloads_from_the_kernel(const char *in, const char *describe_prefix)
{
    struct fdp_table *table;
    struct fdp_dp *dp;
    struct fdp_dp_pmd *pmd;
    struct fdp_dp_options o;
    struct fdp_port_rings ring;
    char *error = NULL;
    static struct off_aux aux;
    unsigned int seed = 31;
    int one = 1;

    memset(&aux, 0, sizeof aux);
    ck_assert_int_eq(fdp_table_create(&table), 0);
    fdp_dp_options_init(&o);
    o.n_frames = N_FRAMES;
    ck_assert_int_eq(fdp_dp_create(table, &o, &dp), 0);
    ck_assert_msg(!fdp_dp_port_add(dp, 2, in, &error), "%s: %s", in, error);
    ck_assert_int_eq(fdp_dp_port_add(dp, 3, "ring:size=512", &error), 0);
    ck_assert_int_eq(fdp_dp_port_rings(dp, 3, &ring), 0);
    add_flow(table, "ip,in_port=2,actions=output:3");
    add_flow(table, "ipv6,in_port=2,actions=output:3");
    ck_assert_int_eq(fdp_dp_pmd_create(dp, 0, &pmd), 0);

    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one,
                                sizeof one), 0);
    /* A TCP packet and a UDP one with partial checksums; a TCP/IPv4
     * super-packet of 5000 bytes in 1448-byte segments (4), and a
     * TCP/IPv6 one of 3000 in 1000-byte segments (3). */
    tpkt_build(&off_sent[0], false, 6, 100, false, &seed);
    tpkt_build(&off_sent[1], true, 17, 333, false, &seed);
    tpkt_build(&off_sent[2], false, 6, 5000, false, &seed);
    tpkt_build(&off_sent[3], true, 6, 3000, false, &seed);
    for (int i = 0; i < 4; i++) {
        tpkt_make_partial(&off_sent[i]);
    }
    off_send(fd, &off_sent[0], VIRTIO_NET_HDR_GSO_NONE, 0);
    off_send(fd, &off_sent[1], VIRTIO_NET_HDR_GSO_NONE, 0);
    off_send(fd, &off_sent[2], VIRTIO_NET_HDR_GSO_TCPV4, 1448);
    off_send(fd, &off_sent[3], VIRTIO_NET_HDR_GSO_TCPV6, 1000);
    close(fd);

    uint32_t want = 1 + 1 + 4 + 3;
    double deadline = now_sec() + 5;
    while (aux.n < want && now_sec() < deadline) {
        fdp_dp_pmd_poll(pmd, NULL);
        unit_peer_drain(&ring, off_collect, &aux);
    }
    char err[200], what[200];
    fdp_dp_port_get_error(dp, 2, err, sizeof err);
    fdp_dp_port_describe(dp, 2, what, sizeof what);
    ck_assert_msg(aux.n == want, "%s: %" PRIu32 " of %" PRIu32 " packets "
                  "(error \"%s\"; %s)", in, aux.n, want, err, what);

    /* Each packet complete and at most an MTU; each super-packet's
     * payload back, in order, from its segments. */
    size_t got_payload[4] = { 0 };
    for (uint32_t i = 0; i < aux.n; i++) {
        const uint8_t *p = aux.pkt[i];
        bool v6 = tget16(p + 12) == 0x86dd;
        uint8_t proto = p[14 + (v6 ? 6 : 9)];
        size_t l4 = 14 + (v6 ? 40 : 20);
        size_t l4_len = v6 ? tget16(p + 18) : tget16(p + 16) - 20u;
        ck_assert_uint_le(aux.len[i], 1514);
        ck_assert_uint_eq(aux.len[i], l4 + l4_len);
        ck_assert_msg(ref_verify(p + 14, v6, proto, p + l4, l4_len),
                      "%s: packet %" PRIu32 ": bad checksum", in, i);
        size_t hl = proto == 6 ? 20 : 8;
        int which = -1;
        for (int k = 0; k < 4; k++) {
            if (off_sent[k].v6 == v6 && off_sent[k].proto == proto
                && !memcmp(p + l4, off_sent[k].b + l4, 4)) {
                which = k;      /* Same ports. */
            }
        }
        ck_assert_int_ge(which, 0);
        const uint8_t *want_payload = off_sent[which].b + l4 + hl
                                      + got_payload[which];
        ck_assert(!memcmp(p + l4 + hl, want_payload, l4_len - hl));
        got_payload[which] += l4_len - hl;
    }
    for (int k = 0; k < 4; k++) {
        ck_assert_uint_eq(got_payload[k], off_sent[k].l4_len
                                          - (off_sent[k].proto == 6 ? 20 : 8));
    }
    ck_assert_msg(!strncmp(what, describe_prefix, strlen(describe_prefix))
                  || strstr(what, describe_prefix), "%s: %s", in, what);

    fdp_dp_pmd_destroy(pmd);
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
}

START_TEST(afpacket_completes_and_segments)
{
    /* The two super-packets reach the packet socket whole (veth does
     * TSO), and are cut here. */
    offloads_from_the_kernel("afpacket:dev=t1",
                             "virtio-net header; 2 partial checksums "
                             "completed, 2 GSO packets cut into 7 segments");
}
END_TEST

START_TEST(afxdp_completes_checksums)
{
    /* With XDP on t1, t0 has no GSO: the kernel cuts the super-packets,
     * each segment still with a partial checksum, completed here. */
    offloads_from_the_kernel("afxdp:dev=t1", "; 9 partial checksums "
                             "completed");
}
END_TEST

/* Moves the test into a network namespace of its own with a veth pair
 * t0-t1; returns NULL, or why the live tests cannot run. */
static const char *
live_setup(void)
{
    static char why[160];

    if (geteuid() != 0) {
        return "needs root (a network namespace, a veth pair, AF_XDP and "
               "AF_PACKET sockets)";
    }
    if (unshare(CLONE_NEWNET) < 0) {
        snprintf(why, sizeof why, "the kernel refuses a network "
                 "namespace: %s", strerror(errno));
        return why;
    }
    /* In the new namespace: nothing speaks IPv6 (no solicitations of the
     * kernel's own on the pair); checksums are the test's own. */
    if (system("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 "
               "net.ipv6.conf.all.disable_ipv6=1 "
               "&& ip link set lo up "
               "&& ip link add t0 type veth peer name t1 "
               "&& ip link set t0 up && ip link set t1 up")) {
        return "cannot make a veth pair";
    }
    return NULL;
}

int
main(void)
{
    Suite *s = suite_create("live-ports");
    TCase *off = unit_tcase(s, "offloads");
    tcase_add_test(off, csum_complete_matches_reference);
    tcase_add_test(off, csum_complete_refuses_bad_offsets);
    tcase_add_test(off, csum_guess_leaves_others_alone);
    tcase_add_test(off, gso_segments_match_reference);
    tcase_add_test(off, gso_refuses_what_it_cannot_cut);

    const char *skip = live_setup();
    if (skip) {
        printf("test-live-ports: live ports skipped: %s\n", skip);
        return unit_run(s);
    }
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
    tcase_add_test(tc, afpacket_completes_and_segments);
    tcase_add_test(tc, afxdp_completes_checksums);
    return unit_run(s);
}
