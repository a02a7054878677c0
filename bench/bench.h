/*
 * flowdp-bench's shared timing and reporting (utilities/flowdp-bench.c),
 * used by the suites in the other utilities/bench-*.c files.
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

struct fdp_dp_pmd;
struct fdp_port_rings;

/* The peer of the datapath suites' ring ports, on the pmd's own thread:
 * sends 'n' packets on 'in' in batches of up to 32, the 'frame_len'-byte
 * frames of 'frames' ('n_frames' of them, one after the other) in turn
 * from '*next', polls 'pmd' after each batch and drains 'out' (up to its
 * ring's 'ring_size').  Returns the packets output. */
uint64_t bench_forward(struct fdp_dp_pmd *pmd,
                       const struct fdp_port_rings *in,
                       const struct fdp_port_rings *out,
                       const uint8_t *frames, size_t frame_len,
                       size_t n_frames, size_t *next, uint32_t ring_size,
                       uint64_t n);

/* Median ns per operation of 'fn(arg, n)' (which performs 'n'
 * operations) over 5 calibrated runs; report() prints its spread. */
double measure(uint64_t (*fn)(void *arg, uint64_t n), void *arg);

/* For a figure timed once, not by measure(): report() prints no spread. */
void no_spread(void);

void report_header(const char *suite);
void report(const struct result *);

/* xorshift64*: a small, fast, seedable generator for inputs. */
uint64_t rnd64(uint64_t *state);

/* Where the ClassBench sets are: $FLOWDP_CLASSBENCH_DIR, or the shared
 * data beside the source tree. */
const char *bench_classbench_dir(void);

/* The suites. */
void suite_table(void);
void suite_peer_acl(void);     /* Only built with DPDK. */
void suite_peer_ovs(void);     /* Only built with --with-ovs-source. */
void suite_ring(void);
void suite_datapath(void);
void suite_datapath_veth(void);    /* Part of suite_datapath (bench-veth.c). */
void suite_extract(void);
void suite_pipeline(void);     /* bench-pipeline.c */

#endif /* FDP_BENCH_H */
