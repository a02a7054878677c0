/*
 * flowdp-bench's shared timing and reporting (bench/flowdp-bench.c),
 * used by the suites in the other bench/bench-*.c files.  What the
 * benchmarks share with the unit tests (the ring peer, the generator,
 * ClassBench loading) is in tests/lib/.
 */
#ifndef FDP_BENCH_H
#define FDP_BENCH_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern bool json_output;
extern bool quick;
extern double seconds_per_case;

/* Defeats dead-code elimination of benchmark results. */
extern volatile uint64_t sink;

struct result {
    const char *suite;
    const char *case_name;
    const char *impl;
    uint64_t entries;
    double ns_per_op;
    uint64_t bytes;
};

double now_ns(void);

/* Median ns per operation of 'fn(arg, n)' (which performs 'n'
 * operations) over 5 calibrated runs; report() prints its spread. */
double measure(uint64_t (*fn)(void *arg, uint64_t n), void *arg);

/* For a figure timed once, not by measure(): report() prints no spread. */
void no_spread(void);

void report_header(const char *suite);
void report(const struct result *);

/* --classbench-dir, or NULL. */
extern const char *classbench_dir_option;

/* True if suite 'name' was named on the command line (not just run as one
 * of all the suites). */
bool suite_named(const char *name);

/* Where the ClassBench sets are (classbench_find_dir() with
 * --classbench-dir), or NULL if they were not found. */
const char *bench_classbench_dir(void);

/* For a suite that needs the ClassBench sets: true if their directory was
 * found and is one; if not, fails naming what is missing when 'suite' was
 * named on the command line, or says so on stderr and returns false (the
 * suite is skipped) when every suite runs.  A set missing from the
 * directory is skipped by the suite, with its path. */
bool bench_classbench_check(const char *suite);

/* The suites. */
void suite_table(void);
void suite_peer_acl(void);     /* Only built with DPDK. */
void suite_peer_ovs(void);     /* Only built with --with-ovs-source. */
void suite_ct(void);           /* bench-ct.c */
/* peer-ovs's ct group (bench-ct.c): Open vSwitch's tracker alone. */
void bench_ct_peer_ovs(void);  /* Only built with --with-ovs-source. */
/* True if suite 'name' runs in this invocation (named, or every suite
 * runs). */
bool suite_runs(const char *name);
void suite_ring(void);
void suite_datapath(void);
void suite_datapath_veth(void);    /* Part of suite_datapath (bench-veth.c). */
void suite_extract(void);
void suite_pipeline(void);     /* bench-pipeline.c */
void suite_group(void);        /* bench-group.c */
void suite_meter(void);        /* bench-meter.c */
void suite_learn(void);        /* bench-learn.c */
void suite_normal(void);       /* bench-normal.c */
void suite_tunnel(void);       /* bench-tunnel.c */
void suite_tunnel_veth(void);  /* Part of suite_tunnel (bench-veth.c). */
void suite_openflow(void);     /* bench-openflow.c */
/* The openflow suite's packet-in cases, with 'flowdpd' (the program) and
 * the suite's work directory 'dir' (bench-openflow-pktin.c). */
void bench_openflow_packet_in(const char *flowdpd, const char *dir);
/* The openflow suite's client floor: a stub switch on a unix socket at
 * 'path' that answers at once and reports back the flows it was given
 * (bench-openflow-floor.c); NULL if it could not start. */
struct floor_switch;
struct floor_switch *floor_switch_start(const char *path);
void floor_switch_stop(struct floor_switch *);

#endif /* FDP_BENCH_H */
