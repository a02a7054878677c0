/*
 * What the files of flowdpd share (internal to the daemon).
 *
 * The daemon is split by concern:
 *
 *   flowdpd.c          main(): options, start-up, the control loop
 *                      (poll() over the listeners and clients), shut-down.
 *   flowdpd-daemon.c   habits of a daemon: logging (and its reopening),
 *                      the run directory, the --db lock, the pidfile,
 *                      --detach.
 *   flowdpd-pmd.c      the poll-mode packet threads.
 *   flowdpd-flows.c    flow operations, the only way flows change: each
 *                      applied in one pipeline transaction, journalled
 *                      (--db) before it commits, replayed on start; the
 *                      journal's snapshot; idle and hard timeouts.
 *   flowdpd-methods.c  the JSON-RPC methods: the dispatch table and the
 *                      small methods (flow changes, show, ports, trace).
 *   flowdpd-dump.c     the methods whose replies are large: dump-flows
 *                      (streamed as JSON text, in parts) and dump-tables.
 *   flowdpd-ct.c       the connection tracker's methods (dump-conntrack,
 *                      flush-conntrack, limits, timeouts...).
 *   flowdpd-ofconn.c   the OpenFlow channel's transport: listeners,
 *                      controllers, framing, hello, fail mode
 *                      (flowdpd-openflow.h says how its files share).
 *   flowdpd-openflow.c what OpenFlow messages do: the dispatch.
 *   flowdpd-ofpin.c    packet-ins from the datapath's upcall.
 *   journal.c          the --db file format (journal.h).
 *
 * Thread-safety: everything here runs in the main thread, except the
 * packet threads' own loop (flowdpd-pmd.c), which touches only the
 * datapath's pmd it polls and 'pmd_stop'.
 */
#ifndef FDP_FLOWDPD_H
#define FDP_FLOWDPD_H 1

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <flowdp/flowdp.h>

struct journal;
struct openflow;
struct pmd_thread;
struct pollfd;
struct rpc_tls;
struct rpc_conn;
struct rpc_listener;

/* At most this many listeners (--listen and the unix socket). */
#define MAX_LISTENERS 8
/* At most this many ports (--port, and show's port list). */
#define MAX_PORTS 1024
/* A change, restore or dump that handled at least this many flows is
 * followed by malloc_trim(), which gives back the pages its parsed JSON
 * (about 150 bytes a flow, freed by then) occupied in the heap. */
#define TRIM_MIN_FLOWS 1024

/* ---------------------------------------------------------------------- */
/* Logging (flowdpd-daemon.c).                                             */

enum log_level { L_ERR, L_WARN, L_INFO, L_DBG };

/* Logs one line, "TIME|LEVEL|MESSAGE", to --log-file or stderr (syslog
 * once detached without --log-file), if 'level' passes the threshold. */
void vlog(enum log_level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the threshold from its name ("err", "warn", "info", "dbg");
 * EINVAL for another name. */
int log_set_level(const char *name);

/* Logs to 'path' (appending) from now on; exits if it cannot open it. */
void log_open(const char *path);

/* Opens log_open()'s file again by its name (logrotate moved it away):
 * 0, or an errno value (logged) with the old stream kept. */
int log_reopen(void);

void log_close(void);

/* ---------------------------------------------------------------------- */
/* The run directory, locks, the pidfile, --detach (flowdpd-daemon.c).     */

/* $FLOWDP_RUNDIR, or the build's run directory. */
const char *rundir(void);

/* rundir()/'file', which the caller frees. */
char *default_path(const char *file);

/* Creates rundir() and its parents if missing (mode 0755 less the
 * umask), and exits if it is not a directory or is writable by others
 * and not ours. */
void make_rundir(void);

/* Opens (creating with 'mode') 'path' and locks it for writing with a
 * POSIX record lock held while '*fdp' stays open.  Returns 0; EAGAIN if
 * another process holds the lock, with its pid in '*holderp' (0 if
 * unknown); or another errno value from open(). */
int lock_file(const char *path, mode_t mode, int *fdp, long *holderp);

/* --pidfile: locks 'path' and writes our pid in it; exits if another
 * process holds it (naming its pid) or on error.  The pidfile is removed
 * at exit. */
void pidfile_create(const char *path);
/* Removes the pidfile if this process made it and it is still the file
 * under that name; then lets go of its lock. */
void pidfile_remove(void);

/* --detach, before any thread exists: forks; the parent waits for the
 * child's detach_finish() and exits 0, or 1 if the child dies first.
 * Returns the child's end of the pipe. */
int detach_start(void);
/* Puts /dev/null on the standard streams (logging to syslog from now on
 * if there is no --log-file) and tells the parent we are ready. */
void detach_finish(int ready_fd);

/* ---------------------------------------------------------------------- */
/* The daemon's state.                                                     */

struct server {
    struct fdp_pipeline *pipeline;  /* Tables 0..254 (pipeline.h). */
    struct fdp_dp *dp;
    unsigned int n_pmds;        /* --pmds. */
    struct pmd_thread *pmds;    /* [n_pmds]. */
    bool pmd_stop;              /* Atomic. */
    bool delete_learned_armed;  /* Some change has had a flow with
                                 * learn(delete_learned): each change
                                 * now checks the learned cookies. */
    bool flows_may_expire;      /* Some flow added had a timeout, or a
                                 * learn or fin_timeout action (whose
                                 * flows may have one): expire_flows()
                                 * has something to look for. */

    struct journal *journal;    /* NULL without --db. */
    int db_lock_fd;             /* FILE.lock of --db=FILE, or -1. */
    bool replaying;
    size_t compact_growth;      /* Compact after this many new bytes. */

    struct rpc_listener *listeners[MAX_LISTENERS];
    size_t n_listeners;
    struct rpc_conn **conns;
    size_t n_conns, alloc_conns;
    size_t max_request;
    bool trim_pending;          /* malloc_trim() once the request that
                                 * changed many flows is freed. */
    struct openflow *of;        /* The OpenFlow channel (flowdpd-ofconn.c). */
};

/* ---------------------------------------------------------------------- */
/* The packet threads (flowdpd-pmd.c).                                     */

/* Starts the --pmds packet threads; exits if it cannot. */
void start_pmds(struct server *);
/* Stops and joins them. */
void stop_pmds(struct server *);

/* ---------------------------------------------------------------------- */
/* Flow operations (flowdpd-flows.c).                                      */

/* Why a flow operation failed, for the callers that answer in another
 * language than text (OpenFlow's errors: flowdpd-openflow.c). */
enum op_why {
    OPW_OTHER,                  /* Anything not below (text in 'msg'). */
    OPW_NOMEM,                  /* Out of memory. */
    OPW_INCONSISTENT,           /* An action needs what the match does
                                 * not guarantee, or goes to a table not
                                 * after the flow's own. */
    OPW_BAD_GROUP,              /* An action names a group that does not
                                 * exist. */
    OPW_BAD_METER,              /* A meter that does not exist. */
    OPW_RANGES,                 /* A range that only pipapo holds. */
    OPW_OVERLAP,                /* check_overlap: an overlapping flow of
                                 * the same priority exists. */
    OPW_BAD_TABLE,              /* Table 255 for a flow. */
    OPW_JOURNAL,                /* The journal could not keep it. */
};

/* How an operation or a method went. */
struct op_result {
    size_t n;                   /* Flows added, changed or removed. */
    size_t n_removed;           /* replace-flows: removed. */
    int code;                   /* RPC error code on failure. */
    char *msg;                  /* Error message on failure (freed by
                                 * whoever made 'r'). */
    enum op_why why;            /* On failure: why, as a code. */
    size_t index;               /* apply_flow_changes(): the change that
                                 * failed. */
};

/* Sets 'r' to fail with JSON-RPC error 'code' and a formatted message;
 * returns EINVAL, for "return op_fail(...)". */
int op_fail(struct op_result *r, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Applies 'op' ({"op": "add"|"mod"|"del"|"replace"|"expire", ...}) in one
 * transaction; with a journal (and not replaying it) the op is on disk
 * before the transaction commits.  Returns 0 or an errno value with
 * r->code and r->msg set. */
int apply_op(struct server *, const json_t *op, struct op_result *r);

/* journal_open()'s replay callback: apply_op() with 's' the server. */
int replay_op(json_t *op, void *s);

/* A flow change already decoded (OpenFlow's flow mods, bundles): applied
 * as the operations "add", "mod" and "del" apply their texts, without
 * the text.  The change owns 'spec''s match and actions. */
enum flow_change_kind {
    FC_ADD,
    FC_MODIFY,
    FC_DELETE,
};

struct fdp__cmatch;

struct flow_change {
    enum flow_change_kind kind;
    struct fdp_flow_spec spec;  /* FC_ADD: the flow.  FC_MODIFY and
                                 * FC_DELETE: the selection (match,
                                 * priority if 'strict', cookie under
                                 * cookie_mask) and, FC_MODIFY, the new
                                 * actions. */
    struct fdp__cmatch *cmatch; /* If nonnull, the match in its compact
                                 * form (lib/match-internal.h), and
                                 * spec.match is NULL: a bundle of many
                                 * changes keeps them so (flow_change_pack()),
                                 * a tenth of the full form's memory. */
    bool strict;                /* FC_MODIFY, FC_DELETE. */
    bool all_tables;            /* FC_MODIFY, FC_DELETE: every table,
                                 * not spec.table_id. */
    bool set_cookie;            /* FC_MODIFY: the flows' cookie becomes
                                 * 'new_cookie'. */
    uint64_t new_cookie;
    bool may_add;               /* FC_MODIFY: if it selects no flow, it
                                 * adds its flow (in table 0 if
                                 * 'all_tables'), with cookie
                                 * 'new_cookie', as Open vSwitch does for
                                 * a modify with a new cookie and no
                                 * cookie mask (OpenFlow 1.0, 1.1, NX); it
                                 * is journalled as that "add". */
    bool check_overlap;         /* FC_ADD: refused (OPW_OVERLAP) if a flow
                                 * of the same table and priority
                                 * overlaps. */
    uint32_t out_port;          /* FC_DELETE: only flows that output to
                                 * this port (an OpenFlow 1.1+ number;
                                 * FDP_OFPP_ANY: any flow)... */
    uint32_t out_group;         /* ...and to this group (FDP_OFPG_ANY:
                                 * any). */
};

/* Frees what 'fc' owns.  Accepts NULL. */
void flow_change_destroy(struct flow_change *fc);

/* Replaces 'fc''s match by its compact form.  Returns 0 or ENOMEM (then
 * 'fc' is as it was). */
int flow_change_pack(struct flow_change *fc);

/* Applies the 'n' changes 'fcs', in order, in one transaction: all of
 * them or, if one fails, none (then r->index names it and r->why says
 * why).  Journalled, with a journal, as the operations their texts make
 * (one "add" if they all add, else one "batch" of them), so that a flow
 * changed this way is journalled exactly as flowdp-ctl's.  Returns 0 or
 * an errno value with 'r' set; r->n counts the flows added, changed or
 * removed. */
int apply_flow_changes(struct server *, const struct flow_change *fcs,
                       size_t n, struct op_result *r);

/* True if 'acts' outputs to OpenFlow port 'port' (a 1.1+ number), as
 * Open vSwitch's out_port selection reads a flow: an output, enqueue or
 * controller action, nested ones included; FDP_OFPP_ANY: true. */
bool actions_output_to_port(const struct fdp_actions *acts, uint32_t port);
/* True if 'acts' has a group action for 'group'; FDP_OFPG_ANY: true. */
bool actions_output_to_group(const struct fdp_actions *acts, uint32_t group);

/* Removes the flows whose idle or hard timeout has passed, as one
 * journalled "expire" operation. */
void expire_flows(struct server *);

/* fdp_rule_get_spec() into match storage of the calling thread's, reused
 * from one call to the next: 'spec->match' is valid until the thread's
 * next call, 'spec->actions' while the read lock is held. */
void get_spec(const struct fdp_rule *, struct fdp_flow_spec *);

/* A filter from the text of 'op''s member 'key' (a match or a flow, with
 * cookie/mask) and its "strict", and in '*table' the table the text names
 * or FDP_TABLE_ALL (as ovs-ofctl: a mod-flows, del-flows or dump-flows
 * without "table=" acts on every table); 'spec' keeps the parsed flow,
 * which the caller destroys.  Returns 0 or EINVAL with 'r' set. */
int parse_filter(const json_t *op, const char *key, unsigned int flags,
                 struct fdp_flow_spec *spec, struct fdp_table_filter *,
                 uint8_t *table, struct op_result *r);

/* ---------------------------------------------------------------------- */
/* The JSON-RPC methods (flowdpd-methods.c, flowdpd-dump.c).               */

/* rpc_conn_run()'s callback: runs the method 'req' names and queues its
 * reply on 'c'.  's' is the server. */
void handle_request(struct rpc_conn *c, json_t *req, void *s);

/* Logs a new port with what its back end set up (an afxdp port's XDP
 * program and mode). */
void log_port_added(struct fdp_dp *, uint32_t port, const char *spec);

/* dump-flows: queues the reply (and its parts) itself.  Returns false
 * with 'r' set if it queued nothing and the caller must reply with the
 * error. */
bool h_dump(struct server *, struct rpc_conn *, const json_t *request,
            const json_t *params, struct op_result *r);

/* dump-tables: table 0, and every other table in use, in table order. */
json_t *h_tables(struct server *, const json_t *params,
                 struct op_result *r);

/* The fragment reassembly methods (flowdpd-ipf.c). */
json_t *h_ipf_set_enabled(struct server *, const json_t *params,
                          struct op_result *r);
json_t *h_ipf_set_min_frag(struct server *, const json_t *params,
                           struct op_result *r);
json_t *h_ipf_set_max_nfrags(struct server *, const json_t *params,
                             struct op_result *r);
json_t *h_ipf_get_status(struct server *, const json_t *params,
                         struct op_result *r);
/* Meters (flowdpd-meters.c): the methods; the operations "meter-add",
 * "meter-mod" and "meter-del", which check and remove the flows a deleted
 * meter takes along, and meter_commit(), which makes the change in the
 * datapath once the operation is journalled and committed; the check that
 * a flow names only meters that exist; the snapshot's meters and their
 * restoring (only while replaying). */
json_t *h_add_meter(struct server *, const json_t *, struct op_result *);
json_t *h_mod_meter(struct server *, const json_t *, struct op_result *);
json_t *h_del_meters(struct server *, const json_t *, struct op_result *);
json_t *h_dump_meters(struct server *, const json_t *, struct op_result *);
json_t *h_meter_stats(struct server *, const json_t *, struct op_result *);
json_t *h_meter_features(struct server *, const json_t *,
                         struct op_result *);
int op_meter_add(struct server *, const json_t *op, struct op_result *);
int op_meter_mod(struct server *, const json_t *op, struct op_result *);
int op_meter_del(struct server *, const json_t *op, struct op_result *);
void meter_commit(struct server *, const json_t *op);
int meters_check_flow(struct server *, const struct fdp_flow_spec *,
                      struct op_result *, size_t i);
json_t *meters_snapshot(struct server *);
int meters_restore(struct server *, const json_t *meters,
                   struct op_result *);
/* The TLV map (flowdpd-tlv.c): the methods; the operations "tlv-add" and
 * "tlv-del" (op_tlv() checks one on a copy of the map, tlv_commit() makes
 * it once journalled); the snapshot's map and its restoring (only while
 * replaying). */
json_t *h_add_tlv_map(struct server *, const json_t *, struct op_result *);
json_t *h_del_tlv_map(struct server *, const json_t *, struct op_result *);
json_t *h_dump_tlv_map(struct server *, const json_t *, struct op_result *);
int op_tlv(struct server *, const json_t *op, struct op_result *);
void tlv_commit(struct server *, const json_t *op);
json_t *tlv_snapshot(struct server *);
int tlv_restore(struct server *, const json_t *tlv, struct op_result *);
/* The underlay (flowdpd-underlay.c): the methods; the operations, each
 * made in the datapath when applied and undone (underlay_undo()) if the
 * journal cannot keep it; the snapshot's "underlay" and its restore; the
 * --addr and --route options. */
json_t *h_addr_add(struct server *, const json_t *, struct op_result *);
json_t *h_addr_del(struct server *, const json_t *, struct op_result *);
json_t *h_addr_show(struct server *, const json_t *, struct op_result *);
json_t *h_route_add(struct server *, const json_t *, struct op_result *);
json_t *h_route_del(struct server *, const json_t *, struct op_result *);
json_t *h_route_show(struct server *, const json_t *, struct op_result *);
json_t *h_route_lookup(struct server *, const json_t *, struct op_result *);
json_t *h_route_resolve(struct server *, const json_t *, struct op_result *);
json_t *h_neigh_set(struct server *, const json_t *, struct op_result *);
json_t *h_neigh_del(struct server *, const json_t *, struct op_result *);
json_t *h_neigh_show(struct server *, const json_t *, struct op_result *);
json_t *h_neigh_flush(struct server *, const json_t *, struct op_result *);
json_t *h_neigh_config(struct server *, const json_t *, struct op_result *);
json_t *h_underlay_stats(struct server *, const json_t *,
                         struct op_result *);
int op_addr_add(struct server *, const json_t *op, struct op_result *);
int op_addr_del(struct server *, const json_t *op, struct op_result *);
int op_route_add(struct server *, const json_t *op, struct op_result *);
int op_route_del(struct server *, const json_t *op, struct op_result *);
int op_neigh_set(struct server *, const json_t *op, struct op_result *);
int op_neigh_del(struct server *, const json_t *op, struct op_result *);
int op_neigh_config(struct server *, const json_t *op, struct op_result *);
void underlay_undo(struct server *, const json_t *op);
json_t *underlay_snapshot(struct server *);
bool underlay_snapshot_empty(const json_t *);
int underlay_restore(struct server *, const json_t *underlay,
                     struct op_result *);
/* Checks the syntax of --addr ('addr') or --route 'spec'; exits with a
 * message naming it if it is wrong. */
void underlay_check_option(bool addr, const char *spec);
void underlay_startup(struct server *, const char *const *addrs,
                      size_t n_addrs, const char *const *routes,
                      size_t n_routes);

/* NORMAL's learning switch (flowdpd-normal.c). */
json_t *h_fdb_show(struct server *, const json_t *params,
                   struct op_result *r);
json_t *h_fdb_flush(struct server *, const json_t *params,
                    struct op_result *r);
json_t *h_fdb_stats(struct server *, const json_t *params,
                    struct op_result *r);
json_t *h_fdb_set(struct server *, const json_t *params,
                  struct op_result *r);
json_t *h_fdb_warp(struct server *, const json_t *params,
                   struct op_result *r);
json_t *h_set_port(struct server *, const json_t *params,
                   struct op_result *r);
/* Applies the VLAN settings 'words' (a JSON array of "vlan_mode=M",
 * "tag=N", "trunks=LIST"; may be NULL) to 'cfg'; 0 or fails 'r'. */
int normal_vlan_params(const json_t *words, struct fdp_port_vlan *cfg,
                       struct op_result *r);
/* Adds "normal" (what NORMAL does with the packet) to a trace whose
 * actions have NORMAL. */
void normal_trace(struct server *, const struct fdp_key *key,
                  json_t *trace);
/* Adds "tunnels" (the outer header each output to a tunnel port gives
 * the packet: flowdpd-tunnel.c) to a trace that has such outputs. */
void tunnel_trace(struct server *, const struct fdp_key *key,
                  json_t *trace);

/* The connection tracker's methods (flowdpd-ct.c), ended by a NULL
 * method: 'fn' returns its result, or NULL with 'r' set; or, for a
 * method whose reply may be large, 'reply' queues the reply (and its
 * parts) itself and returns true, or returns false with 'r' set if it
 * queued nothing. */
struct ct_method {
    const char *method;
    json_t *(*fn)(struct server *, const json_t *params,
                  struct op_result *r);
    bool (*reply)(struct server *, struct rpc_conn *, const json_t *request,
                  const json_t *params, struct op_result *r);
};
extern const struct ct_method ct_methods[];

/* Groups (flowdpd-groups.c): the operations "add-groups" and
 * "del-groups" (apply_op() runs them), the journal snapshot's groups (an
 * array of their texts, NULL if out of memory), the methods, and the
 * ports' liveness for fast-failover groups. */
int op_add_groups(struct server *, const json_t *op, struct op_result *r);
int op_del_groups(struct server *, const json_t *op, struct op_result *r);
json_t *groups_snapshot(struct server *);
json_t *h_add_groups(struct server *, const json_t *params,
                     struct op_result *r);
json_t *h_del_groups(struct server *, const json_t *params,
                     struct op_result *r);
json_t *h_dump_groups(struct server *, const json_t *params,
                      struct op_result *r);
json_t *h_mod_port(struct server *, const json_t *params,
                   struct op_result *r);
void groups_port_live(struct server *, uint32_t port, bool live);

/* ---------------------------------------------------------------------- */
/* The OpenFlow channel (flowdpd-ofconn.c, flowdpd-openflow.c).           */

/* At most this many --controller targets. */
#define MAX_CONTROLLERS 16

/* The command line's OpenFlow options. */
struct of_config {
    const char *listen[MAX_LISTENERS];  /* --openflow. */
    size_t n_listen;
    bool no_openflow;                   /* --no-openflow. */
    const char *controllers[MAX_CONTROLLERS];   /* --controller. */
    size_t n_controllers;
    int probe_ms;                       /* --inactivity-probe. */
    bool standalone;                    /* --fail-mode. */
    uint32_t versions;                  /* --openflow-versions: a bitmap
                                         * of 1 << version. */
};

enum of_opt {
    OF_OPT_LISTEN, OF_OPT_NONE, OF_OPT_CONTROLLER, OF_OPT_PROBE,
    OF_OPT_FAIL_MODE, OF_OPT_VERSIONS,
};

void of_config_init(struct of_config *);
/* Takes option 'opt''s argument 'arg'; exits naming it if it is wrong. */
void of_option(struct of_config *, enum of_opt opt, const char *arg);
/* Opens the listeners (exits if one cannot be opened) and starts
 * connecting to the controllers (those of the journal, if it named any,
 * else --controller's). */
void of_open(struct server *, const struct of_config *,
             const struct rpc_tls *);
void of_close(struct server *);
/* The poll loop: how many pollfds the channel needs now, filling them,
 * handling what poll() reported (NULL: timers only), and the
 * monotonic_ms() time by which of_run() wants to be called again
 * (INT64_MAX if none). */
size_t of_n_pollfds(const struct server *);
void of_fill_pollfds(struct server *, struct pollfd *);
void of_run(struct server *, const struct pollfd *);
int64_t of_wake_time(const struct server *);
/* Every connection of the channel other than 'keep' that is a master
 * becomes a slave. */
struct ofconn;
void of_demote_masters(struct server *, struct ofconn *keep);
/* The JSON-RPC methods and the journal's "openflow-set" operation (its
 * check and its commit), and the snapshot's "openflow" member. */
json_t *h_set_controller(struct server *, const json_t *, struct op_result *);
json_t *h_del_controller(struct server *, const json_t *, struct op_result *);
json_t *h_get_controller(struct server *, const json_t *, struct op_result *);
json_t *h_set_fail_mode(struct server *, const json_t *, struct op_result *);
int op_of_set(struct server *, const json_t *op, struct op_result *);
void of_set_commit(struct server *, const json_t *op);
json_t *of_snapshot(struct server *);
int of_restore(struct server *, const json_t *openflow, struct op_result *);
/* Tells the OpenFlow connections that port 'port' was added or deleted
 * (an OFPT_PORT_STATUS). */
void of_port_status(struct server *, uint32_t port, bool added);

#endif /* FDP_FLOWDPD_H */
