/*
 * flowdpd: the flowdp daemon.
 *
 * Owns one datapath: a pipeline of flow tables (0 to 254, pipeline.h) and
 * ports.  Poll-mode threads forward packets; the main thread serves
 * JSON-RPC requests (utilities/rpc.h) from any number of clients over a
 * unix socket and, if asked, mutual TLS, and does the upkeep: the table's
 * periodic run, idle and hard timeouts, and (with --db) the journal that
 * makes the flow table survive restarts.
 *
 * This file is the daemon's frame: the command line, start-up step by
 * step, the control loop and shut-down.  flowdpd.h lists the other
 * files and what each does.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flowdp/flowdp.h>
#include "utilities/flowdpd.h"
#include "utilities/journal.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

const char *program_name = "flowdpd";

/* --max-request's default: room for a few hundred thousand flows in one
 * add-flows or replace-flows. */
#define DEFAULT_MAX_REQUEST (64u << 20)
/* Compact the journal once it has grown by this much past its last
 * snapshot (and at least doubled). */
#define COMPACT_MIN_GROWTH (16u << 20)
/* Allocations of this many bytes or more get their own mappings, which go
 * back to the system when freed.  glibc's default threshold moves up to
 * the size of the largest mapped block freed (up to 32 MB), after which
 * the large transient buffers of a bulk request (the request text, its
 * journal record) come from the heap and, freed, stay part of the
 * process among the flows allocated after them. */
#define MMAP_THRESHOLD (256u << 10)

static int signal_pipe[2] = { -1, -1 };

/* ---------------------------------------------------------------------- */
/* The control loop.                                                       */

static void
add_conn(struct server *s, struct rpc_conn *c)
{
    if (s->n_conns == s->alloc_conns) {
        size_t alloc = s->alloc_conns ? 2 * s->alloc_conns : 16;
        struct rpc_conn **p = realloc(s->conns, alloc * sizeof *p);
        if (!p) {
            vlog(L_WARN, "out of memory: refusing %s", rpc_conn_name(c));
            rpc_close(c);
            return;
        }
        s->conns = p;
        s->alloc_conns = alloc;
    }
    s->conns[s->n_conns++] = c;
    vlog(L_DBG, "%s: connected", rpc_conn_name(c));
}

static void
serve(struct server *s)
{
    int64_t next_tick = monotonic_ms() + 1000;

    for (;;) {
        size_t n_of = of_n_pollfds(s);
        size_t n_fds = 1 + s->n_listeners + s->n_conns + n_of;
        struct pollfd *fds = calloc(n_fds, sizeof *fds);
        if (!fds) {
            vlog(L_ERR, "out of memory");
            sleep(1);
            continue;
        }
        fds[0] = (struct pollfd) { .fd = signal_pipe[0], .events = POLLIN };
        for (size_t i = 0; i < s->n_listeners; i++) {
            fds[1 + i] = (struct pollfd) {
                .fd = rpc_listener_fd(s->listeners[i]), .events = POLLIN,
            };
        }
        size_t base = 1 + s->n_listeners;
        for (size_t i = 0; i < s->n_conns; i++) {
            fds[base + i] = (struct pollfd) {
                .fd = rpc_conn_fd(s->conns[i]),
                .events = rpc_conn_events(s->conns[i]),
            };
        }
        size_t of_base = base + s->n_conns;
        of_fill_pollfds(s, fds + of_base);
        int64_t wake = of_wake_time(s);
        int64_t wait = (wake < next_tick ? wake : next_tick) - monotonic_ms();
        int r = poll(fds, n_fds, wait < 0 ? 0 : (int) wait);
        if (r < 0 && errno != EINTR) {
            vlog(L_ERR, "poll: %s", strerror(errno));
        }
        if (fds[0].revents) {
            int sig = 0;
            if (read(signal_pipe[0], &sig, sizeof sig) == sizeof sig
                && sig == SIGHUP) {
                vlog(L_INFO, "SIGHUP: reopening the log");
                log_reopen();
                free(fds);
                continue;
            }
            vlog(L_INFO, "signal %d: exiting", sig);
            free(fds);
            return;
        }
        /* Clients first (their fds are indexed by the current array),
         * then new connections. */
        for (size_t i = s->n_conns; i-- > 0; ) {
            struct rpc_conn *c = s->conns[i];
            if (!fds[base + i].revents) {
                continue;
            }
            int error = rpc_conn_run(c, s->max_request, handle_request, s);
            if (s->trim_pending
                && (error || !(rpc_conn_events(c) & POLLOUT))) {
                /* The requests are freed by now, and their JSON with
                 * them; and the replies are out (a large dump's output
                 * buffer, still queued, would be left out of the trim, and
                 * kept: 30 MB after a dump of 200,000 flows). */
                malloc_trim(0);
                s->trim_pending = false;
            }
            if (error) {
                vlog(L_DBG, "%s: %s", rpc_conn_name(c),
                     error == EOF ? "closed" : error == EPROTO
                     ? "TLS handshake or protocol error" : strerror(error));
                if (error == EPROTO) {
                    vlog(L_WARN, "%s: refused (TLS handshake failed: no or "
                         "untrusted client certificate?)", rpc_conn_name(c));
                }
                rpc_close(c);
                s->conns[i] = s->conns[--s->n_conns];
            }
        }
        for (size_t i = 0; i < s->n_listeners; i++) {
            if (fds[1 + i].revents) {
                struct rpc_conn *c;
                while (!rpc_accept(s->listeners[i], &c)) {
                    add_conn(s, c);
                }
            }
        }
        of_run(s, n_of ? fds + of_base : NULL);
        free(fds);
        if (monotonic_ms() >= next_tick) {
            fdp_pipeline_run(s->pipeline);
            expire_flows(s);
            next_tick = monotonic_ms() + 1000;
        }
    }
}

static void
on_signal(int sig)
{
    int saved = errno;
    ssize_t n = write(signal_pipe[1], &sig, sizeof sig);

    (void) n;
    errno = saved;
}

/* ---------------------------------------------------------------------- */
/* Start-up.                                                               */

static void
usage(void)
{
    printf("%s: the flowdp datapath daemon\n"
           "usage: %s [OPTIONS]\n"
           "\n"
           "Control:\n"
           "  --unix=PATH              listen on a unix socket (mode 0600;\n"
           "                           default $FLOWDP_RUNDIR/flowdpd.sock)\n"
           "  --listen=ssl:ADDR:PORT   also listen with mutual TLS\n"
           "  --private-key=FILE --certificate=FILE --ca-cert=FILE\n"
           "                           TLS identity and the CA clients'\n"
           "                           certificates must be signed by\n"
           "  --max-request=BYTES      largest request (default %u)\n"
           "OpenFlow:\n"
           "  --openflow=punix:PATH|ptcp:PORT[:IP]|pssl:PORT[:IP]\n"
           "                           listen for OpenFlow (default\n"
           "                           punix:$FLOWDP_RUNDIR/flowdpd.mgmt);\n"
           "                           repeatable\n"
           "  --no-openflow            no OpenFlow listener\n"
           "  --controller=tcp:IP[:PORT]|ssl:IP[:PORT]|unix:PATH\n"
           "                           connect to a controller; repeatable\n"
           "  --inactivity-probe=MS    echo a silent controller after MS,\n"
           "                           drop it after twice that (5000)\n"
           "  --fail-mode=secure|standalone\n"
           "                           standalone: NORMAL while no\n"
           "                           controller is connected\n"
           "  --openflow-versions=OpenFlow10,OpenFlow13,...\n"
           "                           versions allowed (1.0, 1.3-1.5)\n"
           "Datapath:\n"
           "  --port=N=TYPE:ARGS       a port (ring[:size=N],\n"
           "                           pcap:rx=FILE[,loop=K][,tx=FILE],\n"
           "                           afxdp:dev=IF[,queue=Q][,mode=auto|copy|zc],\n"
           "                           afpacket:dev=IF); repeatable\n"
           "  --addr=PORT:IP/LEN[,mac=MAC]\n"
           "                           an underlay address on a port (as\n"
           "                           addr/add; not journalled); repeatable\n"
           "  --route=PREFIX/LEN,PORT[,GW][,src=IP]\n"
           "                           an underlay route (as route/add; not\n"
           "                           journalled); repeatable\n"
           "  --pmds=N                 N packet threads (default 1); ports\n"
           "                           go to them in turn, in order\n"
           "  --emc=auto|on|off        exact-match cache (default auto: used\n"
           "                           while it makes lookups cheaper)\n"
           "  --smc=auto|on|off        signature match cache, for disjoint\n"
           "                           tables only (default auto)\n"
           "  --no-emc                 the same as --emc=off\n"
           "  --ct-capacity=N          room for N tracked connections\n"
           "                           (default 3000000; about 128 bytes\n"
           "                           each, taken as they are made)\n"
           "  --ct-maxconns=N          the tracker's initial limit, at most\n"
           "                           the capacity (as ct-set-maxconns)\n"
           "  --db=FILE                keep the flow table in FILE: every\n"
           "                           acknowledged change is on disk first,\n"
           "                           and the table is restored on start\n"
           "                           (locked through FILE.lock)\n"
           "  --db-compact=BYTES       rewrite the journal as a snapshot once\n"
           "                           it grew by BYTES (default %u) and\n"
           "                           doubled\n"
           "Daemon:\n"
           "  --detach                 run in the background once ready\n"
           "                           (standard streams on /dev/null)\n"
           "  --pidfile[=FILE]         write the pid and hold a lock on it\n"
           "                           (default $FLOWDP_RUNDIR/flowdpd.pid)\n"
           "  --log-file=FILE          log there instead of stderr; SIGHUP\n"
           "                           reopens it\n"
           "  -v, --verbose[=LEVEL]    log level: err, warn, info (default),\n"
           "                           dbg; -v alone means dbg\n"
           "  -h, --help, -V, --version\n",
           program_name, program_name, DEFAULT_MAX_REQUEST,
           COMPACT_MIN_GROWTH);
}

/* Everything the command line says. */
struct options {
    const char *unix_path, *db, *log_file;
    const char *listen_specs[MAX_LISTENERS];
    const char *port_specs[MAX_PORTS];
    size_t n_listen, n_ports;
    const char *addr_specs[MAX_PORTS], *route_specs[MAX_PORTS];
    size_t n_addrs, n_routes;   /* --addr, --route. */
    char *pidfile;
    bool pidfile_in_rundir;     /* --pidfile without a name. */
    bool detach;
    struct rpc_tls tls;
    struct fdp_dp_options dpo;
    size_t max_request;
    size_t compact_growth;
    uint32_t ct_maxconns;       /* --ct-maxconns, 0 if not given. */
    struct of_config of;        /* The OpenFlow options. */
};

/* Parses the command line into 'o'; exits on --help, --version and any
 * error (with a message naming the option). */
static void
parse_options(int argc, char *argv[], struct options *o)
{
    enum {
        OPT_UNIX = 256, OPT_LISTEN, OPT_KEY, OPT_CERT, OPT_CA, OPT_PORT,
        OPT_DB, OPT_DETACH, OPT_PIDFILE, OPT_LOG, OPT_NO_EMC, OPT_MAX_REQ,
        OPT_DB_COMPACT, OPT_PMDS, OPT_EMC, OPT_SMC, OPT_CT_CAPACITY,
        OPT_CT_MAXCONNS, OPT_ADDR, OPT_ROUTE,
        /* The OpenFlow options, in enum of_opt's order. */
        OPT_OF_FIRST,
    };
    static const struct option options[] = {
        { "unix", required_argument, NULL, OPT_UNIX },
        { "listen", required_argument, NULL, OPT_LISTEN },
        { "private-key", required_argument, NULL, OPT_KEY },
        { "certificate", required_argument, NULL, OPT_CERT },
        { "ca-cert", required_argument, NULL, OPT_CA },
        { "port", required_argument, NULL, OPT_PORT },
        { "addr", required_argument, NULL, OPT_ADDR },
        { "route", required_argument, NULL, OPT_ROUTE },
        { "db", required_argument, NULL, OPT_DB },
        { "db-compact", required_argument, NULL, OPT_DB_COMPACT },
        { "detach", no_argument, NULL, OPT_DETACH },
        { "pidfile", optional_argument, NULL, OPT_PIDFILE },
        { "log-file", required_argument, NULL, OPT_LOG },
        { "no-emc", no_argument, NULL, OPT_NO_EMC },
        { "pmds", required_argument, NULL, OPT_PMDS },
        { "emc", required_argument, NULL, OPT_EMC },
        { "smc", required_argument, NULL, OPT_SMC },
        { "max-request", required_argument, NULL, OPT_MAX_REQ },
        { "ct-capacity", required_argument, NULL, OPT_CT_CAPACITY },
        { "ct-maxconns", required_argument, NULL, OPT_CT_MAXCONNS },
        { "openflow", required_argument, NULL, OPT_OF_FIRST + OF_OPT_LISTEN },
        { "no-openflow", no_argument, NULL, OPT_OF_FIRST + OF_OPT_NONE },
        { "controller", required_argument, NULL,
          OPT_OF_FIRST + OF_OPT_CONTROLLER },
        { "inactivity-probe", required_argument, NULL,
          OPT_OF_FIRST + OF_OPT_PROBE },
        { "fail-mode", required_argument, NULL,
          OPT_OF_FIRST + OF_OPT_FAIL_MODE },
        { "openflow-versions", required_argument, NULL,
          OPT_OF_FIRST + OF_OPT_VERSIONS },
        { "verbose", optional_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int opt;

    memset(o, 0, sizeof *o);
    o->max_request = DEFAULT_MAX_REQUEST;
    o->compact_growth = COMPACT_MIN_GROWTH;
    fdp_dp_options_init(&o->dpo);
    of_config_init(&o->of);
    while ((opt = getopt_long(argc, argv, "hVv::", options, NULL)) != -1) {
        switch (opt) {
        case OPT_UNIX:
            o->unix_path = optarg;
            break;
        case OPT_LISTEN:
            if (o->n_listen == MAX_LISTENERS - 1) {
                fatal("--listen: at most %d", MAX_LISTENERS - 1);
            }
            o->listen_specs[o->n_listen++] = optarg;
            break;
        case OPT_KEY:
            o->tls.private_key = optarg;
            break;
        case OPT_CERT:
            o->tls.certificate = optarg;
            break;
        case OPT_CA:
            o->tls.ca_cert = optarg;
            break;
        case OPT_PORT:
            if (o->n_ports == MAX_PORTS) {
                fatal("--port: at most %d", MAX_PORTS);
            }
            o->port_specs[o->n_ports++] = optarg;
            break;
        case OPT_ADDR:
        case OPT_ROUTE: {
            /* Checked now, applied once the ports exist. */
            bool addr = opt == OPT_ADDR;
            underlay_check_option(addr, optarg);
            size_t *n = addr ? &o->n_addrs : &o->n_routes;
            if (*n == MAX_PORTS) {
                fatal("--%s: at most %d", addr ? "addr" : "route",
                      MAX_PORTS);
            }
            (addr ? o->addr_specs : o->route_specs)[(*n)++] = optarg;
            break;
        }
        case OPT_DB:
            o->db = optarg;
            break;
        case OPT_DB_COMPACT: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || !v) {
                fatal("--db-compact: \"%s\": expected a number of bytes",
                      optarg);
            }
            o->compact_growth = (size_t) v;
            break;
        }
        case OPT_DETACH:
            o->detach = true;
            break;
        case OPT_PIDFILE:
            free(o->pidfile);
            o->pidfile = optarg ? strdup(optarg) : default_path("flowdpd.pid");
            if (!o->pidfile) {
                fatal("out of memory");
            }
            o->pidfile_in_rundir = !optarg;
            break;
        case OPT_LOG:
            o->log_file = optarg;
            break;
        case OPT_NO_EMC:
            o->dpo.emc_mode = FDP_DP_CACHE_OFF;
            break;
        case OPT_PMDS: {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || v < 1 || v > 64) {
                fatal("--pmds: \"%s\": expected a number of threads from "
                      "1 to 64", optarg);
            }
            o->dpo.n_pmds = (uint32_t) v;
            break;
        }
        case OPT_EMC:
        case OPT_SMC: {
            static const char *const modes[] = { "auto", "on", "off" };
            size_t m;
            for (m = 0; m < 3 && strcmp(optarg, modes[m]); m++) {
                continue;
            }
            if (m == 3) {
                fatal("--%s: \"%s\": expected auto, on or off",
                      opt == OPT_EMC ? "emc" : "smc", optarg);
            }
            *(opt == OPT_EMC ? &o->dpo.emc_mode : &o->dpo.smc_mode)
                = (enum fdp_dp_cache_mode) m;
            break;
        }
        case OPT_MAX_REQ: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || v < 1024 || v > (1ull << 31)) {
                fatal("--max-request: \"%s\": expected bytes from 1024 to "
                      "2147483648", optarg);
            }
            o->max_request = (size_t) v;
            break;
        }
        case OPT_CT_CAPACITY:
        case OPT_CT_MAXCONNS: {
            /* The tracker's room is reserved up front (address space,
             * not memory): 2^30 connections at most. */
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || v < 1
                || v > (1ull << 30)) {
                fatal("--%s: \"%s\": expected a number of connections from "
                      "1 to 1073741824",
                      opt == OPT_CT_CAPACITY ? "ct-capacity" : "ct-maxconns",
                      optarg);
            }
            if (opt == OPT_CT_CAPACITY) {
                o->dpo.ct_capacity = (uint32_t) v;
            } else {
                o->ct_maxconns = (uint32_t) v;
            }
            break;
        }
        case 'v':
            if (log_set_level(optarg ? optarg : "dbg")) {
                fatal("--verbose: \"%s\": levels are err, warn, info, "
                      "dbg", optarg);
            }
            break;
        case 'h':
            usage();
            exit(EXIT_SUCCESS);
        case 'V':
            printf("flowdpd (flowdp) %s\n", PACKAGE_VERSION);
            exit(EXIT_SUCCESS);
        default:
            if (opt >= OPT_OF_FIRST && opt <= OPT_OF_FIRST + OF_OPT_VERSIONS) {
                of_option(&o->of, (enum of_opt) (opt - OPT_OF_FIRST), optarg);
                break;
            }
            fatal("unknown option (see --help)");
        }
    }
    if (optind < argc) {
        fatal("unexpected argument \"%s\" (see --help)", argv[optind]);
    }
    if (o->ct_maxconns > o->dpo.ct_capacity) {
        fatal("--ct-maxconns: %" PRIu32 " is above the tracker's capacity "
              "(--ct-capacity, %" PRIu32 ")", o->ct_maxconns,
              o->dpo.ct_capacity);
    }
}

/* Startup, step by step. */

/* The number of flows in all the tables of 'p'. */
static uint64_t
count_flows(struct fdp_pipeline *p)
{
    uint64_t n = 0;

    for (unsigned int id = 0; id < FDP_PIPELINE_N_TABLES; id++) {
        struct fdp_pipeline_table_stats st;
        if (fdp_pipeline_get_table_stats(p, (uint8_t) id, &st)) {
            n += st.n_flows;
        }
    }
    return n;
}

/* Locks --db=FILE through FILE.lock for the daemon's life (see
 * flowdpd-daemon.c): a second daemon on the same journal would have
 * it replay changes the first one made after, or undo them. */
static void
lock_db(struct server *s, const char *db)
{
    char *lock = xasprintf("%s.lock", db);
    long holder;

    if (!lock) {
        fatal("out of memory");
    }
    int error = lock_file(lock, 0600, &s->db_lock_fd, &holder);
    if (error == EAGAIN) {
        if (holder > 0) {
            fatal("--db: %s is in use by another flowdpd, pid %ld (it "
                  "holds %s)", db, holder, lock);
        }
        fatal("--db: %s is in use by another process (it holds %s)", db,
              lock);
    } else if (error == ENOENT || error == ENOTDIR) {
        fatal("--db: %s: %s", db, strerror(error));
    } else if (error) {
        fatal("--db: %s: its lock file %s: %s", db, lock, strerror(error));
    }
    free(lock);
}

/* The pipeline, empty: restore_db() fills it once the datapath exists
 * (the journal's meters are the datapath's). */
static void
open_pipeline(struct server *s)
{
    int error = fdp_pipeline_create(&s->pipeline);
    if (error) {
        fatal("creating the pipeline: %s", strerror(error));
    }
    /* Flows are parsed and printed on this thread, through the map the
     * datapath fills tun_metadata with (flowdpd-tlv.c). */
    fdp_tlv_map_use_for_text(fdp_pipeline_tlv_map(s->pipeline));
}

/* The flows and meters of --db's journal, if given. */
static void
restore_db(struct server *s, const struct options *o)
{
    int error;

    if (o->db) {
        char *msg = NULL, *warning = NULL;
        lock_db(s, o->db);
        s->replaying = true;
        error = journal_open(o->db, replay_op, s, &s->journal, &msg,
                             &warning);
        s->replaying = false;
        if (error) {
            fatal("--db: %s", msg ? msg : strerror(error));
        }
        if (warning) {
            vlog(L_WARN, "%s", warning);
            free(warning);
        }
        uint64_t n_flows = count_flows(s->pipeline);
        vlog(L_INFO, "%s: %" PRIu64 " flows restored", o->db, n_flows);
        if (n_flows >= TRIM_MIN_FLOWS) {
            malloc_trim(0);
        }
    }
}

/* The datapath and the --port ports. */
static void
open_datapath(struct server *s, const struct options *o)
{
    s->n_pmds = o->dpo.n_pmds;
    int error = fdp_dp_create_pipeline(s->pipeline, &o->dpo, &s->dp);
    if (error) {
        fatal("creating the datapath: %s", strerror(error));
    }
    if (o->ct_maxconns) {
        /* parse_options() checked it against the capacity. */
        fdp_dp_ct_set_maxconns(s->dp, o->ct_maxconns);
    }
    for (size_t i = 0; i < o->n_ports; i++) {
        const char *eq = strchr(o->port_specs[i], '=');
        char *end, *msg = NULL;
        unsigned long no = strtoul(o->port_specs[i], &end, 10);
        if (!eq || end != eq) {
            fatal("--port %s: expected N=TYPE:ARGS", o->port_specs[i]);
        }
        error = fdp_dp_port_add(s->dp, (uint32_t) no, eq + 1, &msg);
        if (error) {
            fatal("--port %s: %s", o->port_specs[i],
                  msg ? msg : strerror(error));
        }
        log_port_added(s->dp, (uint32_t) no, eq + 1);
        groups_port_live(s, (uint32_t) no, true);
    }
}

/* The unix socket (--unix or the default path) and the --listen ones.
 * Returns the unix listener's spec, which the caller frees; sets
 * '*default_unix' to the default path if that was used (also freed). */
static char *
open_listeners(struct server *s, struct options *o, char **default_unix)
{
    const char *unix_path = o->unix_path;
    char *unix_spec;

    *default_unix = NULL;
    if (!unix_path) {
        unix_path = *default_unix = default_path("flowdpd.sock");
    }
    if (asprintf(&unix_spec, "unix:%s", unix_path) < 0) {
        fatal("out of memory");
    }
    o->listen_specs[o->n_listen++] = unix_spec;
    for (size_t i = 0; i < o->n_listen; i++) {
        char *msg = NULL;
        int error = rpc_listen(o->listen_specs[i], &o->tls, &s->listeners[i],
                               &msg);
        if (error) {
            fatal("%s", msg ? msg : strerror(error));
        }
        s->n_listeners++;
        vlog(L_INFO, "listening on %s",
             rpc_listener_name(s->listeners[i]));
    }
    return unix_spec;
}

/* SIGTERM and SIGINT end serve() and SIGHUP reopens the log, through
 * 'signal_pipe'; SIGPIPE is ignored (a client that went away is an error
 * on its socket). */
static void
install_signals(void)
{
    if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK)) {
        fatal("pipe: %s", strerror(errno));
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Clean exit: stop packets, close the connections, listeners and ports
 * (completing captures), the table and the journal. */
static void
shut_down(struct server *s)
{
    stop_pmds(s);
    of_close(s);
    for (size_t i = 0; i < s->n_conns; i++) {
        rpc_close(s->conns[i]);
    }
    free(s->conns);
    for (size_t i = 0; i < s->n_listeners; i++) {
        rpc_listener_close(s->listeners[i]);
    }
    fdp_dp_destroy(s->dp);
    fdp_pipeline_destroy(s->pipeline);
    journal_close(s->journal);
    if (s->db_lock_fd >= 0) {
        close(s->db_lock_fd);   /* Lets the next daemon have the db. */
    }
}

int
main(int argc, char *argv[])
{
    struct options o;

    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    parse_options(argc, argv, &o);
    if (fdp_cpu_init()) {
        fatal("%s", fdp_cpu_strerror());
    }
    if (o.log_file) {
        log_open(o.log_file);
    }

    /* Fork before any thread exists (liburcu's call_rcu worker starts
     * with the first deferred free, during journal replay): a forked
     * child has no threads but the caller.  The parent waits until the
     * child is ready, so errors below still reach the terminal. */
    int ready_fd = o.detach ? detach_start() : -1;

    /* The pidfile first: a second daemon with the same one stops here,
     * before it touches the database, the socket or the ports. */
    if (!o.unix_path || o.pidfile_in_rundir
        || (!o.of.no_openflow && !o.of.n_listen)) {
        make_rundir();
    }
    if (o.pidfile) {
        pidfile_create(o.pidfile);
    }
    struct server s = {
        .max_request = o.max_request,
        .compact_growth = o.compact_growth,
        .db_lock_fd = -1,
    };
    char *default_unix;
    open_pipeline(&s);
    open_datapath(&s, &o);
    restore_db(&s, &o);
    underlay_startup(&s, o.addr_specs, o.n_addrs, o.route_specs, o.n_routes);
    char *unix_spec = open_listeners(&s, &o, &default_unix);
    of_open(&s, &o.of, &o.tls);
    install_signals();
    start_pmds(&s);
    vlog(L_INFO, "flowdpd %s started (pid %ld)", PACKAGE_VERSION,
         (long) getpid());
    if (ready_fd >= 0) {
        detach_finish(ready_fd);
    }

    serve(&s);

    shut_down(&s);
    pidfile_remove();
    free(o.pidfile);
    free(unix_spec);
    free(default_unix);
    vlog(L_INFO, "exited");
    log_close();
    return EXIT_SUCCESS;
}
