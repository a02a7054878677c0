/*
 * flowdp-ctl's parts: the offline commands (flowdp-ctl.c) and the
 * commands that talk to flowdpd (ctl-daemon.c).
 */
#ifndef FDP_CTL_H
#define FDP_CTL_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/flowdp.h>
#include "utilities/rpc.h"

/* Parses 'arg' as an unsigned number of at most 'max'; exits with a
 * message naming 'what' if it is not one. */
uint64_t parse_u64(const char *arg, uint64_t max, const char *what);

/* Calls 'cb' with each line of 'name' ("-" for stdin) that is not blank
 * or a '#' comment; exits with a message on read errors. */
void for_each_line(const char *name,
                   void (*cb)(const char *shown, unsigned long line_no,
                              char *line, void *aux),
                   void *aux);

/* trace --flows=FILE: the trace (pipeline-tool.h) of 'key' through the
 * flows of 'flows_path' in a pipeline of this process's own, ct(table=N)
 * continuations with the states 'ct_next' (trace_json()); exits with a
 * message naming 'command' if the file does not load. */
json_t *trace_offline(const char *command, const char *flows_path,
                      const struct fdp_key *key, const uint8_t *ct_next,
                      size_t n_ct_next);

/* Where the daemon is, from the global options. */
extern const char *ctl_remote;
extern struct rpc_tls ctl_tls;

/* -t/--timeout: the seconds a command that talks to the daemon may take
 * in all (connecting, sending, waiting for every reply), as ovs-ofctl's
 * -t; 0 waits forever. */
extern unsigned int ctl_timeout;

/* True if 'name' could be the SWITCH argument of ovs-ofctl's
 * "COMMAND SWITCH [ARGS]": 1 to 15 characters (a Linux interface name)
 * of letters, digits, '-', '_' and '.', not starting with '-'. */
bool ctl_is_switch_name(const char *name);

/* The commands that need flowdpd. */
void cmd_add_flow(int argc, char *argv[]);
void cmd_add_flows(int argc, char *argv[]);
void cmd_mod_flows(int argc, char *argv[]);
void cmd_del_flows(int argc, char *argv[]);
void cmd_dump_flows(int argc, char *argv[]);
void cmd_replace_flows(int argc, char *argv[]);
void cmd_diff_flows(int argc, char *argv[]);
void cmd_dump_tables(int argc, char *argv[]);
void cmd_show(int argc, char *argv[]);
void cmd_add_port(int argc, char *argv[]);
void cmd_del_port(int argc, char *argv[]);
void cmd_trace(int argc, char *argv[]);
void cmd_dump_ports(int argc, char *argv[]);
void cmd_dump_aggregate(int argc, char *argv[]);

/* The underlay (ctl-underlay.c). */
void cmd_addr_add(int argc, char *argv[]);
void cmd_addr_del(int argc, char *argv[]);
void cmd_addr_show(int argc, char *argv[]);
void cmd_route_add(int argc, char *argv[]);
void cmd_route_del(int argc, char *argv[]);
void cmd_route_show(int argc, char *argv[]);
void cmd_route_lookup(int argc, char *argv[]);
void cmd_route_resolve(int argc, char *argv[]);
void cmd_neigh_set(int argc, char *argv[]);
void cmd_neigh_del(int argc, char *argv[]);
void cmd_neigh_show(int argc, char *argv[]);
void cmd_neigh_flush(int argc, char *argv[]);
void cmd_neigh_config(int argc, char *argv[]);
void cmd_underlay_stats(int argc, char *argv[]);

/* NORMAL's learning switch (ctl-normal.c). */
void cmd_fdb_show(int argc, char *argv[]);
void cmd_fdb_flush(int argc, char *argv[]);
void cmd_fdb_stats_show(int argc, char *argv[]);
void cmd_fdb_warp(int argc, char *argv[]);
void cmd_set_fdb(int argc, char *argv[]);
void cmd_set_port(int argc, char *argv[]);
/* The VLAN settings argv[first..argc) as a JSON array, checked; exits
 * with a message naming 'command' on a bad one. */
json_t *ctl_vlan_settings(const char *command, int first, int argc,
                          char *argv[]);

/* Fragment reassembly, as ovs-appctl dpctl/ipf-* (ctl-daemon.c). */
void cmd_ipf_set_enabled(int argc, char *argv[]);
void cmd_ipf_set_disabled(int argc, char *argv[]);
void cmd_ipf_set_min_frag(int argc, char *argv[]);
void cmd_ipf_set_max_nfrags(int argc, char *argv[]);
void cmd_ipf_get_status(int argc, char *argv[]);
/* Sends one request to flowdpd and returns its result; exits with the
 * daemon's message, naming 'command', on failure (ctl-daemon.c). */
json_t *ctl_call(const char *command, const char *method, json_t *params);

/* As ctl_call(), passing each METHOD".part" notification that comes
 * before the reply to 'part' (see rpc_call_parts()). */
json_t *ctl_call_parts(const char *command, const char *method,
                       json_t *params,
                       int (*part)(const json_t *params, void *aux),
                       void *aux);

/* Prints the lines of 'text' (which it cuts up) sorted, so that dumps in
 * the tracker's hash order compare (ctl-ct.c). */
void ctl_print_sorted_lines(char *text);

/* The connection tracker's commands (ctl-ct.c). */
void cmd_dump_conntrack(int argc, char *argv[]);
void cmd_flush_conntrack(int argc, char *argv[]);
void cmd_ct_stats_show(int argc, char *argv[]);
void cmd_ct_get_nconns(int argc, char *argv[]);
void cmd_ct_set_maxconns(int argc, char *argv[]);
void cmd_ct_get_maxconns(int argc, char *argv[]);
void cmd_ct_set_limits(int argc, char *argv[]);
void cmd_ct_del_limits(int argc, char *argv[]);
void cmd_ct_get_limits(int argc, char *argv[]);
void cmd_ct_set_timeout_policy(int argc, char *argv[]);
void cmd_ct_del_timeout_policy(int argc, char *argv[]);
void cmd_ct_get_timeout_policy(int argc, char *argv[]);
void cmd_ct_enable_tcp_seq_chk(int argc, char *argv[]);
void cmd_ct_disable_tcp_seq_chk(int argc, char *argv[]);
void cmd_ct_get_tcp_seq_chk(int argc, char *argv[]);

/* The group commands (ctl-groups.c). */
void cmd_add_group(int argc, char *argv[]);
void cmd_add_groups(int argc, char *argv[]);
void cmd_mod_group(int argc, char *argv[]);
void cmd_del_groups(int argc, char *argv[]);
void cmd_dump_groups(int argc, char *argv[]);
void cmd_dump_group_stats(int argc, char *argv[]);
void cmd_mod_port(int argc, char *argv[]);
/* The TLV map, as ovs-ofctl -O OpenFlow13's (ctl-tlv.c). */
void cmd_add_tlv_map(int argc, char *argv[]);
/* --tlv-map=FILE: the offline commands read tun_metadataN through the
 * mappings of FILE (exits on error). */
void ctl_load_tlv_map(const char *file);
void cmd_del_tlv_map(int argc, char *argv[]);
void cmd_dump_tlv_map(int argc, char *argv[]);
/* The OpenFlow channel's settings (ctl-openflow.c); show's lines about
 * it. */
void cmd_set_controller(int argc, char *argv[]);
void cmd_del_controller(int argc, char *argv[]);
void cmd_get_controller(int argc, char *argv[]);
void cmd_set_fail_mode(int argc, char *argv[]);
void ctl_show_openflow(void);

/* Meters, as ovs-ofctl -O OpenFlow13's (ctl-meters.c). */
void cmd_add_meter(int argc, char *argv[]);
void cmd_mod_meter(int argc, char *argv[]);
void cmd_del_meters(int argc, char *argv[]);
void cmd_dump_meters(int argc, char *argv[]);
void cmd_meter_stats(int argc, char *argv[]);
void cmd_meter_features(int argc, char *argv[]);

#endif /* FDP_CTL_H */
