/*
 * flowdp-ctl: the flowdp command-line tool.
 *
 * Commands for flowdpd (see utilities/ctl-daemon.c): add-flow, add-flows,
 * mod-flows, del-flows, dump-flows, dump-aggregate, replace-flows,
 * diff-flows, dump-tables, dump-ports, show, add-port, del-port, trace
 * (also offline, with --flows=FILE).
 *
 * Offline commands, which need no daemon:
 *   parse-flows FILE|-        print each flow of FILE in canonical form
 *   parse-pcap FILE           the flow key of each packet of a capture, as
 *                             ovs-ofctl parse-pcap prints it
 *   classify FLOWS PACKETS    the flow each packet hits (PACKETS: text
 *                             lines, or --pcap FILE); with several tables
 *                             the flow of each lookup, in order
 *   run FLOWS --port N=SPEC   forward captures through the datapath
 *   cpu                       the CPU level detected and in use
 *   hash [OPTIONS] WORD...    the flow hashes of a key of 64-bit words
 * Errors go to stderr as "flowdp-ctl: <message>" with a non-zero exit.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <time.h>

#include <flowdp/flowdp.h>
#include "lib/pipeline-private.h"   /* --linear: the tests' reference. */
#include "utilities/ctl.h"
#include "utilities/pipeline-tool.h"
#include "utilities/tool.h"

/* Largest key the hash command takes: the flow key is at most 16 words
 * (DESIGN.md, "Flow key"); longer inputs are for flowdp-bench. */
#define MAX_WORDS 16

const char *program_name = "flowdp-ctl";

static void
usage(void)
{
    printf("%s: flowdp control and inspection tool\n"
           "usage: %s [OPTIONS] COMMAND [SWITCH] [ARG...]\n"
           "\n"
           "Commands for flowdpd (tables 0-254: a flow goes to the table its\n"
           "table=N names, 0 by default; mod-flows, del-flows and dump-flows\n"
           "act on the table=N given, or on every table).  As ovs-ofctl's,\n"
           "they take a SWITCH name first, optional here (flowdpd has one\n"
           "datapath; see flowdp-ctl(8) for when a first argument is one),\n"
           "and their options before or after them:\n"
           "  add-flow FLOW            add (or replace) one flow\n"
           "  add-flows FILE|-         add the flows of FILE, all or none\n"
           "  mod-flows [--strict] FLOW\n"
           "                           new actions for the flows FLOW's match\n"
           "                           covers (--strict: that match and\n"
           "                           priority); cookie=V/MASK selects\n"
           "  del-flows [--strict] [MATCH]\n"
           "                           delete the flows MATCH covers (all);\n"
           "                           cookie=V/MASK selects (a plain\n"
           "                           cookie=V is refused, as ovs-ofctl)\n"
           "  dump-flows [--no-stats] [--sort[=FIELD]|--rsort[=FIELD]]\n"
           "             [--strict] [MATCH]\n"
           "                           print flows as ovs-ofctl dump-flows\n"
           "  replace-flows FILE|-     make the table hold exactly FILE's\n"
           "                           flows (unchanged ones keep counters)\n"
           "  diff-flows A B           differences of two flow sources: files,\n"
           "                           or - for the daemon (exit 2 if any)\n"
           "  dump-tables [--partitions]  each table in use: packets looked\n"
           "                           up, matched, missed; masks, sub-tables\n"
           "                           (with --partitions, each partition of\n"
           "                           the partitioned ones)\n"
           "  dump-aggregate [--strict] [MATCH]\n"
           "                           packets, bytes and flows of the flows\n"
           "                           MATCH covers, as ovs-ofctl\n"
           "  show                     ports and their counters\n"
           "  dump-ports [PORT]        port counters, as ovs-ofctl\n"
           "  add-port PORT TYPE:ARGS  add a port (ring, pcap:..., afxdp:dev=IF,\n"
           "                           afpacket:dev=IF)\n"
           "  del-port PORT            remove a port\n"
           "  trace [--flows=FILE] [--ct-next=FLAGS]... PACKET\n"
           "                           the flows a packet hits table by table\n"
           "                           (goto_table, resubmit), the registers\n"
           "                           they set, the actions composed; with\n"
           "                           --flows, offline on FILE's flows\n"
           "  ipf-set-enabled v4|v6    reassemble fragments before ct (default)\n"
           "  ipf-set-disabled v4|v6   fragments reach ct alone (+inv)\n"
           "  ipf-set-min-frag v4|v6 N smallest fragment but the last (>= 400)\n"
           "  ipf-set-max-nfrags N     most fragments held at once (<= 5000)\n"
           "  ipf-get-status           reassembly settings and counters, as\n"
           "                           ovs-appctl dpctl/ipf-get-status\n"
           "  add-group GROUP          add a group (as ovs-ofctl add-group)\n"
           "  add-groups FILE|-        add the groups of FILE, all or none\n"
           "  mod-group [--may-create] GROUP  change a group\n"
           "  del-groups [GROUP]       delete group_id=N (all) and the flows\n"
           "                           that name it\n"
           "  dump-groups [GROUP]      groups, as ovs-ofctl dump-groups\n"
           "  dump-group-stats [GROUP] group and bucket counters\n"
           "  mod-port PORT up|down    a port's state (fast_failover groups\n"
           "                           watch it)\n"
           "\n"
           "Meters (as ovs-ofctl -O OpenFlow13, same syntax and output):\n"
           "  add-meter METER, mod-meter METER\n"
           "                           METER: meter=N,kbps|pktps[,burst][,stats],\n"
           "                           bands=type=drop,rate=R[,burst_size=B]\n"
           "                           [,type=dscp_remark,rate=R,prec_level=P]...\n"
           "  del-meters [meter=N]     delete a meter (all: every meter) and\n"
           "                           the flows that use it\n"
           "  dump-meters [meter=N], meter-stats [meter=N], meter-features\n"
           "\n"
           "Geneve options (as ovs-ofctl -O OpenFlow13, same syntax and output):\n"
           "  add-tlv-map MAP          MAP: {class=C,type=T,len=L}->tun_metadataN\n"
           "                           [,...]; 32 bytes of options in all\n"
           "  del-tlv-map [MAP]        remove mappings (none given: all)\n"
           "  dump-tlv-map             the map\n"
           "  --tlv-map=FILE           (before the command) the offline commands\n"
           "                           read tun_metadataN through the mappings of\n"
           "                           FILE (MAP text, any number of lines);\n"
           "                           without it each flow sizes its own, as\n"
           "                           ovs-ofctl parse-flows does\n"
           "\n"
           "OpenFlow controllers (as ovs-vsctl's; journalled with --db):\n"
           "  set-controller TARGET... connect to tcp:IP[:PORT], ssl:IP[:PORT]\n"
           "                           or unix:PATH controllers\n"
           "  del-controller           no controllers\n"
           "  get-controller           the controllers, one per line\n"
           "  set-fail-mode secure|standalone\n"
           "                           standalone: NORMAL while no controller\n"
           "                           is connected\n"
           "\n"
           "Connection tracking (as ovs-appctl dpctl/..., same output):\n"
           "  dump-conntrack [-m] [-s] [zone=N]\n"
           "                           the connections (sorted); -m verbose,\n"
           "                           -s with the timeout left\n"
           "  flush-conntrack [zone=N] [ORIG-TUPLE [REPLY-TUPLE]]\n"
           "                           remove connections (tuple: ct_nw_src=,\n"
           "                           ct_nw_dst=, ct_ipv6_src=, ct_ipv6_dst=,\n"
           "                           ct_nw_proto=, ct_tp_src=, ct_tp_dst=,\n"
           "                           icmp_id=, icmp_type=, icmp_code=)\n"
           "  ct-stats-show [-m] [-s] [zone=N]\n"
           "                           connections per protocol (-m: per TCP\n"
           "                           state; -s: the packet counters)\n"
           "  ct-get-nconns, ct-get-maxconns, ct-set-maxconns N\n"
           "  ct-set-limits [default=L] [zone=N,limit=L]...\n"
           "  ct-del-limits zone=N[,N]..., ct-get-limits [zone=N[,N]...]\n"
           "  ct-set-timeout-policy [zone=N] NAME=SECONDS...\n"
           "                           (tcp_established=3600, udp_first=...;\n"
           "                           no zone: the global timeouts)\n"
           "  ct-del-timeout-policy zone=N, ct-get-timeout-policy [zone=N]\n"
           "  ct-enable-tcp-seq-chk, ct-disable-tcp-seq-chk, ct-get-tcp-seq-chk\n"
           "\n"
           "The underlay of tunnel ports (as ovs-appctl ovs/route/..., tnl/neigh/...):\n"
           "  addr/add PORT IP/LEN [mac=MAC], addr/del PORT IP/LEN, addr/show\n"
           "                           addresses on ports (answered for in ARP\n"
           "                           and ND; their connected routes)\n"
           "  route/add PREFIX/LEN PORT [GW] [src=IP], route/del PREFIX/LEN,\n"
           "  route/show, route/lookup IP, route/resolve IP\n"
           "  neigh/set PORT IP MAC, neigh/del PORT IP, neigh/show, neigh/flush\n"
           "  neigh/config [limit=N] [aging=SECONDS]\n"
           "  underlay/stats           failed resolutions by reason, ARP and ND\n"
           "\n"
           "Offline commands:\n"
           "  parse-flows FILE|-       print each flow of FILE (- for stdin) in\n"
           "                           canonical ovs-ofctl form\n"
           "  parse-pcap FILE          print the flow key of each packet of an\n"
           "                           Ethernet capture, as ovs-ofctl parse-pcap\n"
           "  classify [--linear] FLOWS-FILE PACKETS-FILE\n"
           "  classify [--linear] [--in-port=N] FLOWS-FILE --pcap PCAP-FILE\n"
           "                           print the cookie of the flow each packet\n"
           "                           hits (0xN), or miss; with several tables\n"
           "                           the cookies of each lookup joined by ','\n"
           "                           (0x1,miss), then limit if resubmits\n"
           "                           went past a limit; --linear scans every\n"
           "                           flow instead of using the tables\n"
           "  run [--no-emc] [--emc-insert-inv-prob=N] [--timing]\n"
           "      [--duration=S] [--ordered] [--dump-conntrack]\n"
           "      [--port-vlan=N:vlan_mode=M|tag=V|trunks=LIST]...\n"
           "      FLOWS-FILE --port N=TYPE:ARGS...\n"
           "                           forward packets through a datapath with\n"
           "                           those flows and ports until every rx\n"
           "                           capture is read (or S seconds passed,\n"
           "                           or SIGINT); print port counters and\n"
           "                           flows with statistics.  Ports:\n"
           "                           pcap:rx=IN.pcap[,loop=K][,tx=OUT.pcap]\n"
           "                           afxdp:dev=IF[,queue=Q][,mode=auto|copy|zc]\n"
           "                           afpacket:dev=IF\n"
           "  (classify and run take --groups=FILE: the groups, one per line\n"
           "   as add-groups reads them, that the flows name; run's ports\n"
           "   are live for fast_failover groups)\n"
           "  cpu                      show the CPU level detected and in use\n"
           "  hash [--basis=N] [--key=K0:K1] WORD...\n"
           "                           hash a key of 64-bit WORDs with every\n"
           "                           flow hash (CRC32C, jhash2, keyed)\n"
           "\n"
           "Options:\n"
           "  --remote=unix:PATH|ssl:HOST:PORT\n"
           "                           the daemon (default\n"
           "                           unix:$FLOWDP_RUNDIR/flowdpd.sock)\n"
           "  --private-key=FILE --certificate=FILE --ca-cert=FILE\n"
           "                           this client's TLS identity, and the CA\n"
           "                           the daemon's certificate must come from\n"
           "  -t, --timeout=SECS       give up on the daemon after SECS\n"
           "                           seconds (connect, send, every reply)\n"
           "  -h, --help               display this help and exit\n"
           "  -V, --version            display version information and exit\n"
           "\n"
           "Environment: FLOWDP_CPU=generic|sse42|avx2 forces a CPU level;\n"
           "  FLOWDP_CPU=validate checks every implementation on every lookup.\n",
           program_name, program_name);
}

/* Parses 'arg' as an unsigned number (decimal, 0x hex or 0 octal) of at
 * most 'max'; 'what' names it in the error message. */
uint64_t
parse_u64(const char *arg, uint64_t max, const char *what)
{
    char *end;

    if (!*arg || *arg == '-' || *arg == '+' || *arg == ' ') {
        fatal("%s: \"%s\" is not an unsigned number", what, arg);
    }
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 0);
    if (*end) {
        fatal("%s: \"%s\" is not an unsigned number (bad character '%c' "
              "at column %td)", what, arg, *end, end - arg + 1);
    }
    if (errno == ERANGE || v > max) {
        fatal("%s: \"%s\" is out of range (maximum %#" PRIx64 ")",
              what, arg, max);
    }
    return v;
}

static void
cmd_cpu(int argc, char *argv[])
{
    if (argc != 1) {
        fatal("cpu: takes no arguments");
    }
    printf("detected: %s\n", fdp_cpu_level_name(fdp_cpu_detected()));
    printf("in use:   %s%s\n", fdp_cpu_level_name(fdp_cpu_level()),
           fdp_cpu_validating() ? " (validate: every implementation on "
                                  "every lookup)" : "");
    printf("fast hash: %s\n", fdp_hash_fast_name());
}

static void
cmd_hash(int argc, char *argv[])
{
    static const struct option long_options[] = {
        { "basis", required_argument, NULL, 'b' },
        { "key", required_argument, NULL, 'k' },
        { NULL, 0, NULL, 0 },
    };
    struct fdp_hash_key key = { 0, 0 };
    uint32_t basis = 0;
    int c;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+", long_options, NULL)) != -1) {
        switch (c) {
        case 'b':
            basis = (uint32_t) parse_u64(optarg, UINT32_MAX, "hash: --basis");
            break;
        case 'k': {
            char *colon = strchr(optarg, ':');
            if (!colon) {
                fatal("hash: --key=%s: expected K0:K1 (two 64-bit numbers)",
                      optarg);
            }
            *colon = '\0';
            key.k0 = parse_u64(optarg, UINT64_MAX, "hash: --key K0");
            key.k1 = parse_u64(colon + 1, UINT64_MAX, "hash: --key K1");
            break;
        }
        default:
            fatal("hash: unknown option (see --help)");
        }
    }

    size_t n_words = (size_t) (argc - optind);
    if (n_words == 0) {
        fatal("hash: at least one 64-bit WORD is required");
    }
    if (n_words > MAX_WORDS) {
        fatal("hash: %zu words given, at most %d", n_words, MAX_WORDS);
    }
    uint64_t words[MAX_WORDS];
    for (size_t i = 0; i < n_words; i++) {
        char what[32];
        snprintf(what, sizeof what, "hash: word %zu", i + 1);
        words[i] = parse_u64(argv[optind + i], UINT64_MAX, what);
    }

    printf("key: %zu word%s, basis 0x%08" PRIx32 "\n", n_words,
           n_words == 1 ? "" : "s", basis);
    printf("crc32c 0x%08" PRIx32 "\n",
           fdp_hash_crc32c(words, n_words, basis));
    printf("jhash2 0x%08" PRIx32 "\n",
           fdp_hash_jhash2(words, n_words, basis));
    printf("keyed  0x%08" PRIx32 "\n", fdp_hash_keyed(words, n_words, &key));
    printf("fast   %s\n", fdp_hash_fast_name());
}

/* Calls 'cb' with each line of 'name' ("-" for stdin), newline removed,
 * skipping blank lines and '#' comments; 'shown' is the name to use in
 * messages.  Exits with a message on read errors and NUL bytes. */
void
for_each_line(const char *name,
              void (*cb)(const char *shown, unsigned long line_no,
                         char *line, void *aux),
              void *aux)
{
    bool is_stdin = !strcmp(name, "-");
    FILE *file = is_stdin ? stdin : fopen(name, "r");
    const char *shown = is_stdin ? "(stdin)" : name;

    if (!file) {
        fatal("%s: %s", name, strerror(errno));
    }

    char *line = NULL;
    size_t alloc = 0;
    unsigned long line_no = 0;
    ssize_t n;
    while ((n = getline(&line, &alloc, file)) != -1) {
        line_no++;
        if ((size_t) n != strlen(line)) {
            fatal("%s:%lu: line contains a NUL byte", shown, line_no);
        }
        line[strcspn(line, "\r\n")] = '\0';
        const char *s = line + strspn(line, " \t");
        if (*s && *s != '#') {
            cb(shown, line_no, line, aux);
        }
    }
    if (ferror(file)) {
        fatal("%s: read error: %s", name, strerror(errno));
    }
    free(line);
    if (!is_stdin) {
        fclose(file);
    }
}

static void
flow_line(const char *shown, unsigned long line_no, char *line, void *cb_)
{
    void (*cb)(struct fdp_flow_spec *) = *(void (**)(struct fdp_flow_spec *))
                                         cb_;
    struct fdp_flow_spec flow;
    char *error;
    int err = fdp_flow_parse(line, 0, &flow, &error);

    if (err) {
        fatal("%s:%lu: %s", shown, line_no, error ? error : strerror(err));
    }
    cb(&flow);
    fdp_flow_spec_destroy(&flow);
}

/* Calls 'cb' for each flow of 'name' ("-" for stdin).  Exits with a
 * message naming the file, line and column on the first line that does
 * not parse. */
static void
for_each_flow_line(const char *name, void (*cb)(struct fdp_flow_spec *))
{
    for_each_line(name, flow_line, &cb);
}

static void
print_flow(struct fdp_flow_spec *flow)
{
    char *s = fdp_flow_format(flow);

    if (!s) {
        fatal("out of memory");
    }
    puts(s);
    free(s);
}

static void
cmd_parse_flows(int argc, char *argv[])
{
    if (argc != 2) {
        fatal("parse-flows: expected one argument, a FILE or - for stdin");
    }
    for_each_flow_line(argv[1], print_flow);
    if (fflush(stdout) || ferror(stdout)) {
        fatal("parse-flows: write error: %s", strerror(errno));
    }
}

/* Ethernet types and IP protocols parse-pcap tells apart. */
enum {
    ETH_TYPE_IP = 0x0800,
    ETH_TYPE_ARP = 0x0806,
    ETH_TYPE_RARP = 0x8035,
    ETH_TYPE_IPV6 = 0x86dd,
};
enum {
    IP_PROTO_ICMP = 1,
    IP_PROTO_IGMP = 2,
    IP_PROTO_TCP = 6,
    IP_PROTO_UDP = 17,
    IP_PROTO_ICMPV6 = 58,
    IP_PROTO_SCTP = 132,
    ND_NEIGHBOR_SOLICIT = 135,  /* ICMPv6 types. */
    ND_NEIGHBOR_ADVERT = 136,
};

/* parse-pcap: the fields ovs-ofctl parse-pcap prints for a packet, as
 * Open vSwitch's flow_wildcards_init_for_packet() chooses them: the
 * Ethernet fields always; then by dl_type the network fields; for IP, the
 * transport fields unless a later fragment.  flow_print() formats them as
 * a match, and so does fdp_match_format(), so the line is the same. */
static const enum fdp_field pcap_eth_fields[] = {
    FDP_F_IN_PORT, FDP_F_DL_SRC, FDP_F_DL_DST, FDP_F_DL_TYPE, FDP_F_VLAN_TCI,
};
static const enum fdp_field pcap_ipv4_fields[] = {
    FDP_F_NW_SRC, FDP_F_NW_DST,
};
static const enum fdp_field pcap_ipv6_fields[] = {
    FDP_F_IPV6_SRC, FDP_F_IPV6_DST, FDP_F_IPV6_LABEL,
};
static const enum fdp_field pcap_ip_fields[] = {
    FDP_F_IP_FRAG, FDP_F_NW_TOS, FDP_F_NW_ECN, FDP_F_NW_TTL, FDP_F_NW_PROTO,
};
static const enum fdp_field pcap_arp_fields[] = {
    FDP_F_ARP_SPA, FDP_F_ARP_TPA, FDP_F_ARP_OP, FDP_F_ARP_SHA, FDP_F_ARP_THA,
};
static const enum fdp_field pcap_ports_fields[] = {
    FDP_F_TP_SRC, FDP_F_TP_DST,
};
static const enum fdp_field pcap_tcp_fields[] = {
    FDP_F_TP_SRC, FDP_F_TP_DST, FDP_F_TCP_FLAGS,
};
static const enum fdp_field pcap_icmp_fields[] = {
    FDP_F_ICMP_TYPE, FDP_F_ICMP_CODE,
};
/* An IPv6 neighbour solicitation or advertisement (type 135 or 136, code
 * 0) adds these, not nd_reserved nor nd_options_type: Open vSwitch's
 * flow_wildcards_init_for_packet() leaves those two out. */
static const enum fdp_field pcap_nd_fields[] = {
    FDP_F_ND_TARGET, FDP_F_ND_SLL, FDP_F_ND_TLL,
};

/* Matches 'key''s value of each of the 'n' 'fields' exactly in 'm'. */
static void
match_exact(struct fdp_match *m, const struct fdp_key *key,
            const enum fdp_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned int width = fdp_field_width(fields[i]);
        struct fdp_value mask = {
            width >= 128 ? UINT64_MAX : 0,
            width >= 64 ? UINT64_MAX : ((uint64_t) 1 << width) - 1,
        };
        if (fdp_match_set_masked(m, fields[i], fdp_key_get(key, fields[i]),
                                 mask)) {
            fatal("parse-pcap: cannot match %s", fdp_field_name(fields[i]));
        }
    }
}

/* The line ovs-ofctl parse-pcap prints for 'key'. */
static char *
format_packet_key(const struct fdp_key *key)
{
    struct fdp_match *m = fdp_match_create();
    uint64_t dl_type = fdp_key_get(key, FDP_F_DL_TYPE).lo;

    if (!m) {
        fatal("out of memory");
    }
#define EXACT(FIELDS) \
    match_exact(m, key, FIELDS, sizeof FIELDS / sizeof *FIELDS)
    EXACT(pcap_eth_fields);
    if (dl_type == ETH_TYPE_ARP || dl_type == ETH_TYPE_RARP) {
        EXACT(pcap_arp_fields);
    } else if (dl_type == ETH_TYPE_IP || dl_type == ETH_TYPE_IPV6) {
        if (dl_type == ETH_TYPE_IP) {
            EXACT(pcap_ipv4_fields);
        } else {
            EXACT(pcap_ipv6_fields);
        }
        EXACT(pcap_ip_fields);
        uint64_t proto = fdp_key_get(key, FDP_F_NW_PROTO).lo;
        if (!(fdp_key_get(key, FDP_F_IP_FRAG).lo & FDP_FRAG_LATER)) {
            if (proto == IP_PROTO_TCP) {
                EXACT(pcap_tcp_fields);
            } else if (proto == IP_PROTO_UDP || proto == IP_PROTO_SCTP
                       || proto == IP_PROTO_IGMP) {
                /* IGMP's type and code, as OVS keeps them. */
                EXACT(pcap_ports_fields);
            } else if (proto == IP_PROTO_ICMP
                       || proto == IP_PROTO_ICMPV6) {
                EXACT(pcap_icmp_fields);
                uint64_t type = fdp_key_get(key, FDP_F_ICMP_TYPE).lo;
                if (dl_type == ETH_TYPE_IPV6 && proto == IP_PROTO_ICMPV6
                    && !fdp_key_get(key, FDP_F_ICMP_CODE).lo
                    && (type == ND_NEIGHBOR_SOLICIT
                        || type == ND_NEIGHBOR_ADVERT)) {
                    EXACT(pcap_nd_fields);
                }
            }
        }
    }
#undef EXACT
    char *s = fdp_match_format(m, FDP_DEFAULT_PRIORITY);
    fdp_match_destroy(m);
    if (!s) {
        fatal("out of memory");
    }
    return s;
}

static void
cmd_parse_pcap(int argc, char *argv[])
{
    char errbuf[PCAP_ERRBUF_SIZE] = "";
    struct pcap_pkthdr *hdr;
    const u_char *data;
    int r;

    if (argc != 2) {
        fatal("parse-pcap: expected one argument, a capture FILE");
    }
    const char *path = argv[1];
    pcap_t *pcap = pcap_open_offline(path, errbuf);
    if (!pcap) {
        /* libpcap names the file itself in some messages, not all. */
        size_t n = strlen(path);
        const char *why = (!strncmp(errbuf, path, n)
                           && !strncmp(errbuf + n, ": ", 2)
                           ? errbuf + n + 2 : errbuf);
        fatal("parse-pcap: %s: %s", path, why);
    }
    if (pcap_datalink(pcap) != DLT_EN10MB) {
        const char *name = pcap_datalink_val_to_name(pcap_datalink(pcap));
        fatal("parse-pcap: %s: link type %d (%s) is not Ethernet", path,
              pcap_datalink(pcap), name ? name : "unknown");
    }
    /* Packets are received on no port: OpenFlow's OFPP_NONE, which
     * ovs-ofctl gives too and both print as in_port=ANY. */
    while ((r = pcap_next_ex(pcap, &hdr, &data)) == 1) {
        struct fdp_key key;
        fdp_packet_extract(data, hdr->caplen, 0xffff, &key, NULL);
        char *line = format_packet_key(&key);
        puts(line);
        free(line);
    }
    if (r == PCAP_ERROR) {
        fflush(stdout);
        fatal("parse-pcap: %s: %s", path, pcap_geterr(pcap));
    }
    pcap_close(pcap);
    if (fflush(stdout) || ferror(stdout)) {
        fatal("parse-pcap: write error: %s", strerror(errno));
    }
}

/* classify, run and trace --flows: the flows of a file in a pipeline of
 * this process's own. */

/* Loading: 'command' names the command in messages. */
struct loader {
    const char *command;
    struct fdp_pipeline *pipeline;
};

static void
load_flow_line(const char *shown, unsigned long line_no, char *line,
               void *l_)
{
    struct loader *l = l_;
    struct fdp_flow_spec flow;
    char *msg = NULL;
    int error = fdp_flow_parse(line, 0, &flow, &msg);

    if (error) {
        fatal("%s:%lu: %s", shown, line_no, msg ? msg : strerror(error));
    }
    error = fdp_pipeline_insert(l->pipeline, &flow, 0);
    fdp_flow_spec_destroy(&flow);
    if (error == ENOTSUP) {
        fatal("%s: %s:%lu: ranges need pipapo sub-tables, which this build "
              "lacks", l->command, shown, line_no);
    } else if (error == EINVAL) {
        fatal("%s: %s:%lu: an action needs what the match does not "
              "guarantee, or goes to a table not after the flow's own",
              l->command, shown, line_no);
    } else if (error == ENOENT) {
        fatal("%s: %s:%lu: group: names a group that does not exist (give "
              "groups with --groups=FILE)", l->command, shown, line_no);
    } else if (error) {
        fatal("%s: %s:%lu: %s", l->command, shown, line_no, strerror(error));
    }
}

/* --groups=FILE of run and classify: groups (as ovs-ofctl add-groups
 * reads them) the flows may name, loaded before them. */
static const char *groups_path;

static void
load_group_line(const char *shown, unsigned long line_no, char *line,
                void *l_)
{
    struct loader *l = l_;
    struct fdp_group *g;
    char *msg = NULL;
    int error = fdp_group_parse(line, &g, &msg);

    if (error) {
        fatal("%s: %s:%lu: %s", l->command, shown, line_no,
              msg ? msg : strerror(error));
    }
    error = fdp_pipeline_group_add(l->pipeline, g, FDP_GROUP_ADD);
    if (error) {
        fatal("%s: %s:%lu: %s", l->command, shown, line_no,
              error == EEXIST ? "a group with that id exists"
              : error == ENOENT ? "names a group not defined before it"
              : error == ELOOP ? "its buckets lead back to the group itself"
              : strerror(error));
    }
}

/* Says that the ports of the --port N=... arguments 'args' are live, for
 * the fast-failover groups that watch them. */
static void
set_ports_live(struct fdp_pipeline *p, const char **args, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned long no = strtoul(args[i], NULL, 10);
        if (no && no <= 0xfeff) {
            fdp_pipeline_set_port_live(p, (uint32_t) no, true);
        }
    }
}

/* Reads FLOWS-FILE 'path' (and the groups of --groups) into a new
 * pipeline, in one transaction. */
static struct fdp_pipeline *
load_pipeline(const char *command, const char *path)
{
    struct loader l = { command, NULL };
    int error = fdp_pipeline_create(&l.pipeline);

    if (error) {
        fatal("%s: creating the pipeline: %s", command, strerror(error));
    }
    error = fdp_pipeline_begin(l.pipeline);
    if (error) {
        fatal("%s: %s", command, strerror(error));
    }
    if (groups_path) {
        for_each_line(groups_path, load_group_line, &l);
    }
    for_each_line(path, load_flow_line, &l);
    error = fdp_pipeline_commit(l.pipeline);
    if (error) {
        fatal("%s: %s: %s", command, path, strerror(error));
    }
    return l.pipeline;
}

json_t *
trace_offline(const char *command, const char *flows_path,
              const struct fdp_key *key, const uint8_t *ct_next,
              size_t n_ct_next)
{
    struct fdp_pipeline *p = load_pipeline(command, flows_path);

    fdp_table_read_lock();
    json_t *trace = trace_json(p, key, ct_next, n_ct_next);
    fdp_table_read_unlock();
    if (!trace) {
        fatal("out of memory");
    }
    fdp_pipeline_destroy(p);
    return trace;
}

/* What one classification is printed with. */
struct classify {
    struct fdp_pipeline *pipeline;
    bool linear;                        /* --linear. */
    struct fdp_pipeline_result result;  /* Reused from packet to packet. */
};

/* Every packet goes through the pipeline (one lookup for a program of
 * one table, which prints as before the pipeline: a cookie or "miss");
 * --linear scans each table's flows instead, the reference the tests
 * compare against. */
static void
classify_batch(struct classify *c, const struct fdp_key *keys, size_t n)
{
    unsigned int flags = c->linear ? FDP__PIPELINE_LINEAR : 0;

    fdp_table_read_lock();
    for (size_t i = 0; i < n; i++) {
        if (fdp_pipeline_classify(c->pipeline, &keys[i], flags, &c->result,
                                  NULL, NULL)) {
            fatal("classify: out of memory");
        }
        print_classify_result(stdout, &c->result);
    }
    fdp_table_read_unlock();
}

/* Packets read so far and not yet classified. */
struct packet_batch {
    struct classify *c;
    size_t n;
    struct fdp_key keys[FDP_TABLE_BATCH_MAX];
};

static void
packet_line(const char *shown, unsigned long line_no, char *line, void *b_)
{
    struct packet_batch *b = b_;
    char *msg;
    int error = fdp_packet_parse(line, &b->keys[b->n], &msg);

    if (error) {
        fatal("%s:%lu: %s", shown, line_no, msg ? msg : strerror(error));
    }
    if (++b->n == FDP_TABLE_BATCH_MAX) {
        classify_batch(b->c, b->keys, b->n);
        b->n = 0;
    }
}

/* Classifies each packet of the capture 'path', received on 'in_port'. */
static void
classify_pcap(struct classify *c, const char *path, uint32_t in_port)
{
    char errbuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *pcap = pcap_open_offline(path, errbuf);
    struct packet_batch batch = { .c = c, .n = 0 };
    struct pcap_pkthdr *hdr;
    const u_char *data;
    int r;

    if (!pcap) {
        fatal("classify: %s: %s", path, errbuf);
    }
    if (pcap_datalink(pcap) != DLT_EN10MB) {
        fatal("classify: %s: link type %d is not Ethernet", path,
              pcap_datalink(pcap));
    }
    while ((r = pcap_next_ex(pcap, &hdr, &data)) == 1) {
        fdp_packet_extract(data, hdr->caplen, in_port, &batch.keys[batch.n],
                           NULL);
        if (++batch.n == FDP_TABLE_BATCH_MAX) {
            classify_batch(c, batch.keys, batch.n);
            batch.n = 0;
        }
    }
    classify_batch(c, batch.keys, batch.n);
    if (r == PCAP_ERROR) {
        fatal("classify: %s: %s", path, pcap_geterr(pcap));
    }
    pcap_close(pcap);
}

static void
cmd_classify(int argc, char *argv[])
{
    static const struct option options[] = {
        { "linear", no_argument, NULL, 'l' },
        { "pcap", required_argument, NULL, 'p' },
        { "in-port", required_argument, NULL, 'i' },
        { "groups", required_argument, NULL, 'g' },
        { NULL, 0, NULL, 0 },
    };
    const char *pcap_path = NULL;
    uint32_t in_port = 0;
    bool linear = false;
    int opt;

    optind = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'l':
            linear = true;
            break;
        case 'p':
            pcap_path = optarg;
            break;
        case 'i':
            in_port = (uint32_t) parse_u64(optarg, 0xffff, "--in-port");
            break;
        case 'g':
            groups_path = optarg;
            break;
        default:
            fatal("classify: bad option (see --help)");
        }
    }
    argc -= optind;
    argv += optind;
    if (pcap_path ? argc != 1 : argc != 2) {
        fatal("classify: expected FLOWS-FILE and PACKETS-FILE or "
              "--pcap PCAP-FILE");
    }
    if (in_port && !pcap_path) {
        fatal("classify: --in-port applies to --pcap (text packets give "
              "in_port=N)");
    }

    struct classify c = {
        .pipeline = load_pipeline("classify", argv[0]), .linear = linear,
    };
    fdp_pipeline_result_init(&c.result);
    if (pcap_path) {
        classify_pcap(&c, pcap_path, in_port);
    } else {
        struct packet_batch batch = { .c = &c, .n = 0 };
        for_each_line(argv[1], packet_line, &batch);
        classify_batch(&c, batch.keys, batch.n);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fatal("classify: write error: %s", strerror(errno));
    }
    fdp_pipeline_result_destroy(&c.result);
    fdp_pipeline_destroy(c.pipeline);
}

/* ---------------------------------------------------------------------- */
/* run                                                                     */

static double
monotonic_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One flow of a dump: its text and how it sorts. */
struct dumped_flow {
    uint8_t table_id;
    int priority;
    char *key;                  /* The match's text. */
    char *text;
};

struct dump {
    struct dumped_flow *flows;
    size_t n, alloc;
    int64_t now_ms;
    struct fdp_match *match;    /* Storage for fdp_rule_get_spec(). */
};

static bool
collect_flow(const struct fdp_rule *rule, void *dump_)
{
    struct dump *d = dump_;
    struct fdp_flow_spec spec;
    struct fdp_rule_stats stats;

    fdp_rule_get_spec(rule, &spec, d->match);
    fdp_rule_get_stats(rule, &stats);
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? 2 * d->alloc : 64;
        d->flows = realloc(d->flows, d->alloc * sizeof *d->flows);
        if (!d->flows) {
            fatal("out of memory");
        }
    }
    char *text = fdp_flow_format_stats(&spec, &stats, d->now_ms);
    char *key = fdp_match_format(spec.match, spec.priority);
    if (!text || !key) {
        fatal("out of memory");
    }
    d->flows[d->n++] = (struct dumped_flow) { spec.table_id, spec.priority,
                                              key, text };
    return true;
}

static int
compare_dumped(const void *a_, const void *b_)
{
    const struct dumped_flow *a = a_, *b = b_;

    if (a->table_id != b->table_id) {
        return a->table_id < b->table_id ? -1 : 1;
    }
    return a->priority != b->priority ? (a->priority < b->priority ? 1 : -1)
                                      : strcmp(a->key, b->key);
}

/* Prints every flow of 'p' with statistics, table by table, highest
 * priority first (then in the order of their matches' text, so that the
 * output is repeatable). */
static void
dump_flows_with_stats(struct fdp_pipeline *p)
{
    struct dump d = { .now_ms = monotonic_ms(), .match = fdp_match_create() };

    if (!d.match) {
        fatal("out of memory");
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(p, FDP_TABLE_ALL, collect_flow, &d);
    fdp_table_read_unlock();
    fdp_match_destroy(d.match);
    qsort(d.flows, d.n, sizeof *d.flows, compare_dumped);
    for (size_t i = 0; i < d.n; i++) {
        puts(d.flows[i].text);
        free(d.flows[i].text);
        free(d.flows[i].key);
    }
    free(d.flows);
}

/* Adds the port given as "N=TYPE:ARGS" to 'dp'. */
static void
add_port_arg(struct fdp_dp *dp, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *number, *msg = NULL;

    if (!eq) {
        fatal("run: --port %s: expected N=TYPE:ARGS", arg);
    }
    number = strndup(arg, (size_t) (eq - arg));
    if (!number) {
        fatal("out of memory");
    }
    uint32_t port_no = (uint32_t) parse_u64(number, 0xfeff, "--port");
    free(number);
    if (!strncmp(eq + 1, "ring", 4) && (!eq[5] || eq[5] == ':')) {
        fatal("run: --port %s: a ring port needs a peer in the same "
              "process; run replays captures (pcap:...)", arg);
    }
    int error = fdp_dp_port_add(dp, port_no, eq + 1, &msg);
    if (error) {
        fatal("run: --port %s: %s", arg, msg ? msg : strerror(error));
    }
}

/* Prints the counters of every port, as ovs-ofctl dump-ports; returns
 * true if some port reported an error. */
static bool
print_ports(struct fdp_dp *dp)
{
    uint32_t ports[256];
    size_t n = fdp_dp_port_list(dp, ports, 256);
    bool any_error = false;

    for (size_t i = 0; i < n && i < 256; i++) {
        struct fdp_port_stats s;
        char error[256];
        fdp_dp_port_get_stats(dp, ports[i], &s, NULL);
        printf("  port %2" PRIu32 ": rx pkts=%" PRIu64 ", bytes=%" PRIu64
               ", drop=%" PRIu64 ", errs=%" PRIu64 "\n"
               "           tx pkts=%" PRIu64 ", bytes=%" PRIu64
               ", drop=%" PRIu64 "\n", ports[i], s.rx_packets, s.rx_bytes,
               s.rx_dropped, s.rx_errors, s.tx_packets, s.tx_bytes,
               s.tx_dropped);
        fdp_dp_port_describe(dp, ports[i], error, sizeof error);
        if (error[0]) {
            printf("           %s\n", error);
        }
        fdp_dp_port_get_error(dp, ports[i], error, sizeof error);
        if (error[0]) {
            fprintf(stderr, "%s: port %" PRIu32 ": %s\n", program_name,
                    ports[i], error);
            any_error = true;
        }
    }
    return any_error;
}

/* Set by SIGINT or SIGTERM: "run" stops forwarding and prints what it
 * counted. */
static volatile sig_atomic_t run_interrupted;

static void
run_interrupt(int sig)
{
    (void) sig;
    run_interrupted = 1;
}

/* ---- run --ordered ----
 *
 * An exchange recorded on two ports (a request arriving on port 1, its
 * answer on port 2) must replay as it happened: the tracker has to see
 * the request commit before the answer arrives, or the answer is +new
 * instead of +est+rpl.  Plain pcap ports cannot promise that: each is
 * polled for a batch of its own, so port 1's whole capture may go
 * through before port 2's first packet.
 *
 * So with --ordered, run plays the NIC itself.  Each --port
 * N=pcap:rx=IN[,tx=OUT] becomes a ring port N of the datapath, and run
 * keeps the captures: a merged reader holds the next packet of every rx
 * capture and always takes the one with the earliest timestamp (a tie
 * goes to the port given first, then to the order within a capture).
 * That one packet goes onto its port's rx ring, and the pmd is polled
 * until it has received it: it classifies, executes (ct included) and
 * transmits it within that poll.  Then every port's tx ring is drained
 * into its tx capture (stamped with the time of the packet that caused
 * it, as a pcap port stamps a packet with the time it was read) and the
 * frames go back; only then is the next packet read.  One packet per
 * poll costs the batch's amortisation, which a replay for comparison
 * does not need. */

struct ordered_port {
    uint32_t port_no;
    struct fdp_port_rings rings;
    pcap_t *rx;                 /* NULL: no rx capture, or it is read. */
    pcap_t *tx_dead;
    pcap_dumper_t *tx;          /* NULL: what is sent here is dropped. */
    char *rx_path, *tx_path;
    uint64_t errors;            /* Capture read errors. */
    /* The next packet of 'rx', copied (pcap's buffer is reused). */
    bool has_next;
    struct pcap_pkthdr next_hdr;
    uint8_t *next_data;
    size_t next_alloc;
};

/* Reads the next packet of 'op''s capture into its 'next' slot. */
static void
ordered_read(struct ordered_port *op)
{
    struct pcap_pkthdr *hdr;
    const u_char *data;

    op->has_next = false;
    if (!op->rx) {
        return;
    }
    int r = pcap_next_ex(op->rx, &hdr, &data);
    if (r == PCAP_ERROR_BREAK) {
        pcap_close(op->rx);
        op->rx = NULL;
        return;
    }
    if (r != 1) {
        /* A capture cut short: what came before it was replayed, the
         * rest of this port's is lost; run ends non-zero, as with a pcap
         * port's rx error. */
        fprintf(stderr, "%s: port %" PRIu32 ": rx=%s: %s\n", program_name,
                op->port_no, op->rx_path, pcap_geterr(op->rx));
        op->errors++;
        pcap_close(op->rx);
        op->rx = NULL;
        return;
    }
    if (hdr->caplen > op->next_alloc) {
        op->next_alloc = hdr->caplen;
        op->next_data = realloc(op->next_data, op->next_alloc);
        if (!op->next_data) {
            fatal("out of memory");
        }
    }
    memcpy(op->next_data, data, hdr->caplen);
    op->next_hdr = *hdr;
    op->has_next = true;
}

/* Parses "pcap:rx=IN[,tx=OUT]" for port 'port_no' into 'op'. */
static void
ordered_open(struct ordered_port *op, uint32_t port_no, const char *spec)
{
    char errbuf[PCAP_ERRBUF_SIZE];

    memset(op, 0, sizeof *op);
    op->port_no = port_no;
    if (strncmp(spec, "pcap:", 5)) {
        fatal("run: --port %" PRIu32 "=%s: --ordered replays captures: "
              "expected pcap:rx=IN.pcap[,tx=OUT.pcap]", port_no, spec);
    }
    char *copy = strdup(spec + 5), *save = NULL;
    if (!copy) {
        fatal("out of memory");
    }
    for (char *arg = strtok_r(copy, ",", &save); arg;
         arg = strtok_r(NULL, ",", &save)) {
        char **slot = (!strncmp(arg, "rx=", 3) ? &op->rx_path
                       : !strncmp(arg, "tx=", 3) ? &op->tx_path : NULL);
        if (!slot || !arg[3]) {
            fatal("run: --port %" PRIu32 "=%s: \"%s\": --ordered takes "
                  "rx=FILE and tx=FILE only", port_no, spec, arg);
        }
        if (*slot) {
            fatal("run: --port %" PRIu32 "=%s: %.2s given twice", port_no,
                  spec, arg);
        }
        *slot = strdup(arg + 3);
        if (!*slot) {
            fatal("out of memory");
        }
    }
    free(copy);
    if (!op->rx_path && !op->tx_path) {
        fatal("run: --port %" PRIu32 "=%s: needs rx=FILE, tx=FILE or both",
              port_no, spec);
    }
    if (op->rx_path && op->tx_path && !strcmp(op->rx_path, op->tx_path)) {
        fatal("run: --port %" PRIu32 "=%s: rx and tx are the same file",
              port_no, spec);
    }
    if (op->rx_path) {
        op->rx = pcap_open_offline(op->rx_path, errbuf);
        if (!op->rx) {
            fatal("run: --port %" PRIu32 ": rx=%s: %s", port_no,
                  op->rx_path, errbuf);
        }
        if (pcap_datalink(op->rx) != DLT_EN10MB) {
            fatal("run: --port %" PRIu32 ": rx=%s: not an Ethernet capture",
                  port_no, op->rx_path);
        }
    }
    if (op->tx_path) {
        op->tx_dead = pcap_open_dead(DLT_EN10MB, 65535);
        op->tx = op->tx_dead ? pcap_dump_open(op->tx_dead, op->tx_path)
                             : NULL;
        if (!op->tx) {
            fatal("run: --port %" PRIu32 ": tx=%s: %s", port_no,
                  op->tx_path, op->tx_dead ? pcap_geterr(op->tx_dead)
                                           : "out of memory");
        }
    }
}

static void
ordered_close(struct ordered_port *op)
{
    if (op->rx) {
        pcap_close(op->rx);
    }
    if (op->tx) {
        pcap_dump_close(op->tx);
    }
    if (op->tx_dead) {
        pcap_close(op->tx_dead);
    }
    free(op->rx_path);
    free(op->tx_path);
    free(op->next_data);
}

/* Drains every port's tx ring into its capture, stamped 'ts'. */
static void
ordered_drain(struct ordered_port *ports, size_t n,
              const struct timeval *ts)
{
    for (size_t i = 0; i < n; i++) {
        struct fdp_port_rings *r = &ports[i].rings;
        uint32_t idx, cidx;
        uint32_t got = fdp_ring_peek(r->tx, UINT32_MAX, &idx);
        for (uint32_t k = 0; k < got; k++) {
            struct fdp_desc d = *fdp_ring_slot(r->tx, idx + k);
            if (ports[i].tx) {
                struct pcap_pkthdr hdr = { .ts = *ts, .caplen = d.len,
                                           .len = d.len };
                pcap_dump((u_char *) ports[i].tx, &hdr,
                          (const u_char *) r->umem + d.addr);
            }
            /* The completion ring is as large as the tx ring, and the
             * datapath takes completions at every poll. */
            if (fdp_ring_reserve(r->completion, 1, &cidx) != 1) {
                fatal("run: port %" PRIu32 ": completion ring full",
                      ports[i].port_no);
            }
            *fdp_ring_slot(r->completion, cidx) = d;
            fdp_ring_submit(r->completion, 1);
        }
        fdp_ring_release(r->tx, got);
    }
}

/* Polls 'pmd' until it received the packet just submitted (a bounded
 * number of polls: it is received by the first in practice). */
static void
ordered_poll_one(struct fdp_dp_pmd *pmd, uint32_t port_no)
{
    for (int tries = 0; tries < 1000; tries++) {
        if (fdp_dp_pmd_poll(pmd, NULL)) {
            return;
        }
    }
    fatal("run: port %" PRIu32 ": the datapath does not take a packet "
          "from its rx ring", port_no);
}

/* Replays the rx captures of 'ports' in timestamp order, one packet at a
 * time (see above).  Returns the packets replayed; sets '*rx_errors' to
 * those too big for a frame (skipped, as a pcap port counts them). */
static uint64_t
run_ordered(struct fdp_dp *dp, struct fdp_dp_pmd *pmd,
            struct ordered_port *ports, size_t n, uint64_t *rx_errors)
{
    uint64_t n_packets = 0;

    *rx_errors = 0;
    for (size_t i = 0; i < n; i++) {
        ordered_read(&ports[i]);
    }
    while (!run_interrupted) {
        struct ordered_port *best = NULL;
        for (size_t i = 0; i < n; i++) {
            struct ordered_port *op = &ports[i];
            if (op->has_next
                && (!best || timercmp(&op->next_hdr.ts, &best->next_hdr.ts,
                                      <))) {
                best = op;
            }
        }
        if (!best) {
            break;
        }

        /* A free frame from the fill ring; the datapath refills it when
         * polled. */
        struct fdp_port_rings *r = &best->rings;
        uint32_t fidx, ridx;
        int tries = 0;
        while (!fdp_ring_peek(r->fill, 1, &fidx)) {
            if (++tries > 1000) {
                fatal("run: port %" PRIu32 ": no free frame on the fill "
                      "ring", best->port_no);
            }
            fdp_dp_pmd_poll(pmd, NULL);
            ordered_drain(ports, n, &best->next_hdr.ts);
        }
        struct fdp_desc d = *fdp_ring_slot(r->fill, fidx);
        fdp_ring_release(r->fill, 1);
        if (best->next_hdr.caplen > d.len) {
            /* Too big for a frame: give the frame back unused (an empty
             * packet would be a packet) by sending nothing and counting
             * it, as a pcap port counts rx errors. */
            fprintf(stderr, "%s: port %" PRIu32 ": a %" PRIu32 "-byte "
                    "packet does not fit a %" PRIu32 "-byte frame: "
                    "skipped\n", program_name, best->port_no,
                    best->next_hdr.caplen, d.len);
            (*rx_errors)++;
            d.len = 0;
            if (fdp_ring_reserve(r->completion, 1, &ridx) != 1) {
                fatal("run: port %" PRIu32 ": completion ring full",
                      best->port_no);
            }
            *fdp_ring_slot(r->completion, ridx) = d;
            fdp_ring_submit(r->completion, 1);
            ordered_read(best);
            continue;
        }
        memcpy((uint8_t *) r->umem + d.addr, best->next_data,
               best->next_hdr.caplen);
        d.len = best->next_hdr.caplen;
        if (fdp_ring_reserve(r->rx, 1, &ridx) != 1) {
            fatal("run: port %" PRIu32 ": rx ring full", best->port_no);
        }
        *fdp_ring_slot(r->rx, ridx) = d;
        fdp_ring_submit(r->rx, 1);
        ordered_poll_one(pmd, best->port_no);
        /* NORMAL learns from this packet before the next arrives. */
        fdp_dp_fdb_sync(dp);
        ordered_drain(ports, n, &best->next_hdr.ts);
        n_packets++;
        ordered_read(best);
    }
    /* Frames given back in the last drain return to the pool. */
    fdp_dp_pmd_poll(pmd, NULL);
    for (size_t i = 0; i < n; i++) {
        *rx_errors += ports[i].errors;
    }
    return n_packets;
}

/* ---- run --dump-conntrack ---- */

struct ct_lines {
    char **lines;
    size_t n, alloc;
};

static bool
collect_conn(const struct fdp_ct_entry *e, void *aux)
{
    struct ct_lines *l = aux;

    if (l->n == l->alloc) {
        l->alloc = l->alloc ? 2 * l->alloc : 64;
        l->lines = realloc(l->lines, l->alloc * sizeof *l->lines);
        if (!l->lines) {
            fatal("out of memory");
        }
    }
    l->lines[l->n] = fdp_ct_entry_format(e, 0);
    if (!l->lines[l->n++]) {
        fatal("out of memory");
    }
    return true;
}

static int
compare_strings(const void *a_, const void *b_)
{
    const char *const *a = a_, *const *b = b_;

    return strcmp(*a, *b);
}

/* Prints the tracker's connections in dump-conntrack's format, sorted. */
static void
print_conntrack(struct fdp_dp *dp)
{
    struct ct_lines l = { NULL, 0, 0 };

    fdp_dp_ct_dump(dp, NULL, collect_conn, &l);
    if (l.n) {
        qsort(l.lines, l.n, sizeof *l.lines, compare_strings);
    }
    for (size_t i = 0; i < l.n; i++) {
        puts(l.lines[i]);
        free(l.lines[i]);
    }
    free(l.lines);
}

static void
cmd_run(int argc, char *argv[])
{
    static const struct option options[] = {
        { "port", required_argument, NULL, 'p' },
        { "no-emc", no_argument, NULL, 'n' },
        { "emc-insert-inv-prob", required_argument, NULL, 'e' },
        { "timing", no_argument, NULL, 't' },
        { "duration", required_argument, NULL, 'd' },
        { "ordered", no_argument, NULL, 'o' },
        { "dump-conntrack", no_argument, NULL, 'c' },
        { "groups", required_argument, NULL, 'g' },
        { "port-vlan", required_argument, NULL, 'v' },
        { NULL, 0, NULL, 0 },
    };
    bool ordered = false, dump_conntrack = false;
    struct fdp_dp_options dp_options;
    uint64_t duration = 0;
    const char **port_args = calloc((size_t) argc, sizeof *port_args);
    const char **vlan_args = calloc((size_t) argc, sizeof *vlan_args);
    size_t n_ports = 0, n_vlans = 0;
    bool timing = false;
    int opt;

    if (!port_args || !vlan_args) {
        fatal("out of memory");
    }
    fdp_dp_options_init(&dp_options);
    optind = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            port_args[n_ports++] = optarg;
            break;
        case 'n':
            dp_options.emc_insert_inv_prob = 0;
            break;
        case 'e':
            dp_options.emc_insert_inv_prob
                = (uint32_t) parse_u64(optarg, UINT32_MAX,
                                       "--emc-insert-inv-prob");
            break;
        case 't':
            timing = true;
            break;
        case 'd':
            duration = parse_u64(optarg, 86400, "--duration");
            break;
        case 'o':
            ordered = true;
            break;
        case 'c':
            dump_conntrack = true;
            break;
        case 'g':
            groups_path = optarg;
            break;
        case 'v':
            vlan_args[n_vlans++] = optarg;
            break;
        default:
            fatal("run: bad option (see --help)");
        }
    }
    if (optind != argc - 1) {
        fatal("run: expected FLOWS-FILE and --port N=TYPE:ARGS options");
    }
    const char *flows_path = argv[optind];
    if (!n_ports) {
        fatal("run: no ports (give --port N=pcap:rx=IN.pcap,...)");
    }

    struct fdp_pipeline *pipeline = load_pipeline("run", flows_path);
    set_ports_live(pipeline, port_args, n_ports);
    struct fdp_dp *dp;
    int error = fdp_dp_create_pipeline(pipeline, &dp_options, &dp);
    if (error) {
        fatal("run: creating the datapath: %s", strerror(error));
    }
    struct ordered_port *oports = NULL;
    if (ordered) {
        if (duration) {
            fatal("run: --ordered replays captures to their end: "
                  "--duration does not apply");
        }
        oports = calloc(n_ports, sizeof *oports);
        if (!oports) {
            fatal("out of memory");
        }
        for (size_t i = 0; i < n_ports; i++) {
            const char *arg = port_args[i], *eq = strchr(arg, '=');
            char *number = eq ? strndup(arg, (size_t) (eq - arg)) : NULL;
            char *msg = NULL;
            if (!eq) {
                fatal("run: --port %s: expected N=TYPE:ARGS", arg);
            }
            if (!number) {
                fatal("out of memory");
            }
            uint32_t port_no = (uint32_t) parse_u64(number, 0xfeff,
                                                    "--port");
            free(number);
            ordered_open(&oports[i], port_no, eq + 1);
            /* The rings hold a few packets at most: one in flight, and
             * what it makes the datapath send (a flood, several
             * outputs). */
            error = fdp_dp_port_add(dp, port_no, "ring:size=256", &msg);
            if (!error) {
                error = fdp_dp_port_rings(dp, port_no, &oports[i].rings);
            }
            if (error) {
                fatal("run: --port %s: %s", arg,
                      msg ? msg : strerror(error));
            }
        }
    } else {
        for (size_t i = 0; i < n_ports; i++) {
            add_port_arg(dp, port_args[i]);
        }
    }
    free(port_args);
    /* --port-vlan=N:SETTING, each one setting of port N (NORMAL's VLANs,
     * as flowdp-ctl set-port). */
    for (size_t i = 0; i < n_vlans; i++) {
        const char *colon = strchr(vlan_args[i], ':');
        struct fdp_port_vlan cfg;
        char *msg = NULL;
        if (!colon) {
            fatal("run: --port-vlan=%s: expected N:SETTING (e.g. 1:tag=10)",
                  vlan_args[i]);
        }
        char *number = strndup(vlan_args[i], (size_t) (colon - vlan_args[i]));
        if (!number) {
            fatal("out of memory");
        }
        uint32_t port_no = (uint32_t) parse_u64(number, 0xfeff,
                                                "--port-vlan");
        free(number);
        if (fdp_dp_port_get_vlan(dp, port_no, &cfg)) {
            fatal("run: --port-vlan=%s: no port %" PRIu32, vlan_args[i],
                  port_no);
        }
        if (fdp_port_vlan_parse(&cfg, colon + 1, &msg)) {
            fatal("run: --port-vlan: %s", msg ? msg : vlan_args[i]);
        }
        error = fdp_dp_port_set_vlan(dp, port_no, &cfg);
        if (error) {
            fatal("run: --port-vlan=%s: %s", vlan_args[i], strerror(error));
        }
    }
    free(vlan_args);

    struct fdp_dp_pmd *pmd;
    error = fdp_dp_pmd_create(dp, 0, &pmd);
    if (error) {
        fatal("run: %s", strerror(error));
    }
    /* Live ports (afxdp, afpacket) never run dry: those runs end after
     * --duration seconds, or when interrupted. */
    struct sigaction sa = { .sa_handler = run_interrupt };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    double start = monotonic_sec();
    bool exhausted = false;
    uint64_t n_packets = 0;
    double upkeep = start;
    unsigned int idle = 0;
    uint64_t ordered_errors = 0;
    if (ordered) {
        n_packets = run_ordered(dp, pmd, oports, n_ports, &ordered_errors);
        exhausted = true;
    }
    for (unsigned int polls = 0; !exhausted && !run_interrupted; polls++) {
        size_t got = fdp_dp_pmd_poll(pmd, &exhausted);
        n_packets += got;
        if (got) {
            idle = 0;
        } else if (++idle > 64) {
            /* Nothing for a while (live ports): nap 50 us, as flowdpd. */
            struct timespec nap = { 0, 50 * 1000 };
            nanosleep(&nap, NULL);
        }
        if (duration && !(polls % 64)
            && monotonic_sec() - start >= (double) duration) {
            break;
        }
        /* The table's periodic upkeep (re-ranking, the Tuple Space
         * Explosion defence), once a second as a switch would run it. */
        if (!(polls % 1024) && monotonic_sec() - upkeep >= 1.0) {
            fdp_pipeline_run(pipeline);
            upkeep = monotonic_sec();
        }
    }
    double elapsed = monotonic_sec() - start;
    fdp_dp_pmd_destroy(pmd);

    struct fdp_dp_stats st;
    fdp_dp_get_stats(dp, &st);
    bool port_error = print_ports(dp);
    printf("  datapath: packets=%" PRIu64 ", emc_hits=%" PRIu64
           ", table_hits=%" PRIu64 ", missed=%" PRIu64 ", ttl_expired=%"
           PRIu64 "\n", st.n_packets, st.n_emc_hits, st.n_table_hits,
           st.n_missed, st.n_ttl_expired);
    if (timing) {
        printf("  time: %.3f s, %.0f packets/s\n", elapsed,
               elapsed > 0 ? (double) n_packets / elapsed : 0.0);
    }
    dump_flows_with_stats(pipeline);
    if (dump_conntrack) {
        print_conntrack(dp);
    }
    fdp_dp_destroy(dp);         /* Closes (completes) the tx captures. */
    fdp_pipeline_destroy(pipeline);
    for (size_t i = 0; oports && i < n_ports; i++) {
        ordered_close(&oports[i]);  /* Completes --ordered's. */
    }
    free(oports);
    if (fflush(stdout) || ferror(stdout)) {
        fatal("run: write error: %s", strerror(errno));
    }
    if (port_error || ordered_errors) {
        exit(EXIT_FAILURE);
    }
}

struct command {
    const char *name;
    void (*run)(int argc, char *argv[]);
    bool daemon;                /* Talks to flowdpd (options anywhere). */
};

static const struct command commands[] = {
    { "classify", cmd_classify, false },
    { "cpu", cmd_cpu, false },
    { "parse-flows", cmd_parse_flows, false },
    { "parse-pcap", cmd_parse_pcap, false },
    { "hash", cmd_hash, false },
    { "run", cmd_run, false },
    { "add-flow", cmd_add_flow, true },
    { "add-flows", cmd_add_flows, true },
    { "mod-flows", cmd_mod_flows, true },
    { "del-flows", cmd_del_flows, true },
    { "dump-flows", cmd_dump_flows, true },
    { "dump-aggregate", cmd_dump_aggregate, true },
    { "replace-flows", cmd_replace_flows, true },
    { "diff-flows", cmd_diff_flows, true },
    { "dump-tables", cmd_dump_tables, true },
    { "dump-ports", cmd_dump_ports, true },
    { "show", cmd_show, true },
    { "add-port", cmd_add_port, true },
    { "del-port", cmd_del_port, true },
    { "trace", cmd_trace, true },
    { "dump-conntrack", cmd_dump_conntrack, true },
    { "flush-conntrack", cmd_flush_conntrack, true },
    { "ct-stats-show", cmd_ct_stats_show, true },
    { "ct-get-nconns", cmd_ct_get_nconns, true },
    { "ct-set-maxconns", cmd_ct_set_maxconns, true },
    { "ct-get-maxconns", cmd_ct_get_maxconns, true },
    { "ct-set-limits", cmd_ct_set_limits, true },
    { "ct-del-limits", cmd_ct_del_limits, true },
    { "ct-get-limits", cmd_ct_get_limits, true },
    { "ct-set-timeout-policy", cmd_ct_set_timeout_policy, true },
    { "ct-del-timeout-policy", cmd_ct_del_timeout_policy, true },
    { "ct-get-timeout-policy", cmd_ct_get_timeout_policy, true },
    { "ct-enable-tcp-seq-chk", cmd_ct_enable_tcp_seq_chk, true },
    { "ct-disable-tcp-seq-chk", cmd_ct_disable_tcp_seq_chk, true },
    { "ct-get-tcp-seq-chk", cmd_ct_get_tcp_seq_chk, true },
    { "ipf-set-enabled", cmd_ipf_set_enabled, true },
    { "ipf-set-disabled", cmd_ipf_set_disabled, true },
    { "ipf-set-min-frag", cmd_ipf_set_min_frag, true },
    { "ipf-set-max-nfrags", cmd_ipf_set_max_nfrags, true },
    { "ipf-get-status", cmd_ipf_get_status, true },
    { "add-group", cmd_add_group, true },
    { "add-groups", cmd_add_groups, true },
    { "mod-group", cmd_mod_group, true },
    { "del-groups", cmd_del_groups, true },
    { "dump-groups", cmd_dump_groups, true },
    { "dump-group-stats", cmd_dump_group_stats, true },
    { "mod-port", cmd_mod_port, true },
    { "add-meter", cmd_add_meter, true },
    { "mod-meter", cmd_mod_meter, true },
    { "del-meters", cmd_del_meters, true },
    { "dump-meters", cmd_dump_meters, true },
    { "meter-stats", cmd_meter_stats, true },
    { "meter-features", cmd_meter_features, true },
    { "add-tlv-map", cmd_add_tlv_map, true },
    { "del-tlv-map", cmd_del_tlv_map, true },
    { "dump-tlv-map", cmd_dump_tlv_map, true },
    { "set-controller", cmd_set_controller, true },
    { "del-controller", cmd_del_controller, true },
    { "get-controller", cmd_get_controller, true },
    { "set-fail-mode", cmd_set_fail_mode, true },
    { "fdb/show", cmd_fdb_show, true },
    { "fdb/flush", cmd_fdb_flush, true },
    { "fdb/stats-show", cmd_fdb_stats_show, true },
    { "fdb/warp", cmd_fdb_warp, true },
    { "set-fdb", cmd_set_fdb, true },
    { "set-port", cmd_set_port, true },
    { "addr/add", cmd_addr_add, true },
    { "addr/del", cmd_addr_del, true },
    { "addr/show", cmd_addr_show, true },
    { "route/add", cmd_route_add, true },
    { "route/del", cmd_route_del, true },
    { "route/show", cmd_route_show, true },
    { "route/lookup", cmd_route_lookup, true },
    { "route/resolve", cmd_route_resolve, true },
    { "neigh/set", cmd_neigh_set, true },
    { "neigh/del", cmd_neigh_del, true },
    { "neigh/show", cmd_neigh_show, true },
    { "neigh/flush", cmd_neigh_flush, true },
    { "neigh/config", cmd_neigh_config, true },
    { "underlay/stats", cmd_underlay_stats, true },
};

static const struct command *
find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(name, commands[i].name)) {
            return &commands[i];
        }
    }
    return NULL;
}

/* Options.  As with ovs-ofctl, the options of a command may come before
 * it ("flowdp-ctl --strict del-flows MATCH") as well as after it: the
 * global parser takes both kinds and hands a command its own ones first
 * in its arguments ("del-flows --strict MATCH"), in their long form.  For
 * the commands that talk to the daemon, options may also come after the
 * arguments (their arguments never start with '-', "-" for stdin aside);
 * the offline commands keep their own parsers and take global options only
 * before the command. */
enum {
    OPT_REMOTE = 256, OPT_KEY, OPT_CERT, OPT_CA,
    OPT_STRICT, OPT_NO_STATS, OPT_SORT, OPT_RSORT, OPT_PARTITIONS,
    OPT_FLOWS,
    OPT_CT_NEXT,
    OPT_MAY_CREATE,
    OPT_TLV_MAP,
};

static const struct option long_options[] = {
    { "remote", required_argument, NULL, OPT_REMOTE },
    { "private-key", required_argument, NULL, OPT_KEY },
    { "certificate", required_argument, NULL, OPT_CERT },
    { "ca-cert", required_argument, NULL, OPT_CA },
    { "timeout", required_argument, NULL, 't' },
    { "tlv-map", required_argument, NULL, OPT_TLV_MAP },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    /* Options of commands, handed over to them. */
    { "strict", no_argument, NULL, OPT_STRICT },
    { "no-stats", no_argument, NULL, OPT_NO_STATS },
    { "sort", optional_argument, NULL, OPT_SORT },
    { "rsort", optional_argument, NULL, OPT_RSORT },
    { "partitions", no_argument, NULL, OPT_PARTITIONS },
    { "flows", required_argument, NULL, OPT_FLOWS },
    { "ct-next", required_argument, NULL, OPT_CT_NEXT },
    { "may-create", no_argument, NULL, OPT_MAY_CREATE },
    { NULL, 0, NULL, 0 },
};

/* The options handed over to the command, as "--NAME[=VALUE]". */
struct handed {
    char **args;
    int n;
};

/* Parses options of argv from 'optind' on ('permute': wherever they are;
 * else up to the first argument that is not one) into the globals and
 * 'handed'. */
static void
parse_options(int argc, char *argv[], bool permute, struct handed *handed)
{
    int c, index;

    opterr = !permute;          /* After the command, the command says. */
    while ((c = getopt_long(argc, argv, permute ? "ht:Vms" : "+ht:Vms",
                            long_options, &index)) != -1) {
        switch (c) {
        case OPT_REMOTE:
            ctl_remote = optarg;
            break;
        case OPT_KEY:
            ctl_tls.private_key = optarg;
            break;
        case OPT_CERT:
            ctl_tls.certificate = optarg;
            break;
        case OPT_CA:
            ctl_tls.ca_cert = optarg;
            break;
        case 't':
            /* At most a year (alarm() takes any unsigned int): longer
             * is surely a typo. */
            ctl_timeout = (unsigned int) parse_u64(optarg, 365 * 86400,
                                                   "-t/--timeout");
            break;
        case 'm':
        case 's':
            /* dump-conntrack and ct-stats-show's -m and -s (as
             * ovs-appctl dpctl/...): handed over as they are. */
            handed->args[handed->n] = strdup(c == 'm' ? "-m" : "-s");
            if (!handed->args[handed->n++]) {
                fatal("out of memory");
            }
            break;
        case OPT_TLV_MAP:
            ctl_load_tlv_map(optarg);
            break;
        case 'h':
            usage();
            exit(EXIT_SUCCESS);
        case 'V':
            printf("flowdp-ctl (flowdp) %s\n", PACKAGE_VERSION);
            exit(EXIT_SUCCESS);
        case OPT_STRICT:
        case OPT_NO_STATS:
        case OPT_SORT:
        case OPT_RSORT:
        case OPT_PARTITIONS:
        case OPT_FLOWS:
        case OPT_CT_NEXT:
        case OPT_MAY_CREATE: {
            const char *name = long_options[index].name;
            char *arg = optarg ? xasprintf("--%s=%s", name, optarg)
                               : xasprintf("--%s", name);
            if (!arg) {
                fatal("out of memory");
            }
            handed->args[handed->n++] = arg;
            break;
        }
        default:
            if (permute && !strncmp(argv[optind - 1], "--", 2)) {
                /* Not one of ours after the command: the command says
                 * what it makes of it. */
                handed->args[handed->n] = strdup(argv[optind - 1]);
                if (!handed->args[handed->n++]) {
                    fatal("out of memory");
                }
                break;
            }
            fatal("unknown option (see --help)");
        }
    }
}

int
main(int argc, char *argv[])
{
    struct handed handed = { calloc((size_t) argc + 1, sizeof(char *)), 0 };
    char *default_remote = NULL;

    if (!handed.args) {
        fatal("out of memory");
    }
    parse_options(argc, argv, false, &handed);
    if (fdp_cpu_init()) {
        fatal("%s", fdp_cpu_strerror());
    }
    if (optind >= argc) {
        fatal("missing command name (see --help)");
    }
    const char *name = argv[optind];
    const struct command *command = find_command(name);
    if (!command) {
        fatal("unknown command '%s' (see --help)", name);
    }

    /* The command's argv: its name, the options handed over, then its
     * other arguments (for daemon commands, options after the name are
     * parsed here too, wherever they are). */
    int sub_argc = argc - optind;
    char **sub_argv = argv + optind;
    if (command->daemon) {
        optind = 0;             /* glibc: start a new scan at [1]. */
        parse_options(sub_argc, sub_argv, true, &handed);
        sub_argv += optind - 1;
        sub_argc -= optind - 1;
    }
    char **cmd_argv = calloc((size_t) (sub_argc + handed.n + 1),
                             sizeof *cmd_argv);
    if (!cmd_argv) {
        fatal("out of memory");
    }
    int cmd_argc = 0;
    cmd_argv[cmd_argc++] = (char *) name;
    for (int i = 0; i < handed.n; i++) {
        cmd_argv[cmd_argc++] = handed.args[i];
    }
    for (int i = 1; i < sub_argc; i++) {
        cmd_argv[cmd_argc++] = sub_argv[i];
    }

    if (!ctl_remote) {
        const char *dir = getenv("FLOWDP_RUNDIR");
        if (asprintf(&default_remote, "unix:%s/flowdpd.sock",
                     dir && *dir ? dir : FDP_RUNDIR) < 0) {
            fatal("out of memory");
        }
        ctl_remote = default_remote;
    }

    optind = 0;
    command->run(cmd_argc, cmd_argv);
    free(default_remote);
    for (int i = 0; i < handed.n; i++) {
        free(handed.args[i]);
    }
    free(handed.args);
    free(cmd_argv);
    return EXIT_SUCCESS;
}
