/*
 * A datapath's meters (internal): the table of meters by id and the
 * token buckets the packet threads run.  See datapath/meter.c.
 */
#ifndef FDP_METER_H
#define FDP_METER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowdp/meter.h>

struct fdp__pkt;
struct fdp_dp;

struct fdp__meters;
struct fdp__meter;

/* The clock meters read, in nanoseconds of any monotonic origin. */
typedef uint64_t fdp__meter_clock_fn(void *aux);

/* ---- Writers: the caller excludes concurrent calls on one table ---- */

/* Returns a new empty table reading CLOCK_MONOTONIC, or NULL. */
struct fdp__meters *fdp__meters_create(void);
/* Frees 'ms' and its meters (after a grace period for packet threads
 * that might still read them).  Accepts NULL. */
void fdp__meters_destroy(struct fdp__meters *ms);

/* Replaces the clock (tests: a clock they move by hand).  Call before
 * any meter is added: buckets keep times of the clock they began with. */
void fdp__meters_set_clock(struct fdp__meters *, fdp__meter_clock_fn *,
                           void *aux);

/* As fdp_dp_meter_set(), _del(), _get() and _list() (flowdp/meter.h). */
int fdp__meters_set(struct fdp__meters *, const struct fdp_meter_config *,
                    bool create);
int fdp__meters_del(struct fdp__meters *, uint32_t id);
int fdp__meters_get(struct fdp__meters *, uint32_t id,
                    struct fdp_meter_config *, struct fdp_meter_stats *);
size_t fdp__meters_list(struct fdp__meters *, uint32_t *ids, size_t max);
size_t fdp__meters_count(const struct fdp__meters *);

/* ---- Packet threads: inside an RCU read-side section ---- */

/* The table's clock, now. */
uint64_t fdp__meters_now(const struct fdp__meters *);

/* Meter 'id', or NULL: valid until the caller's read-side section ends. */
struct fdp__meter *fdp__meters_find(const struct fdp__meters *, uint32_t id);

/* Runs the 'n' packets (at most 64) of sizes 'sizes' through meter 'm' at
 * time 'now_ns', in order, and sets fired[i] to the index of the band
 * packet i fired, or -1 if it fired none (it conforms to every band).
 * Counts them in the meter's counters.  Lock-free: one compare-and-swap
 * per band, retried if another thread changed the bucket meanwhile.
 * 'shard' is the calling thread's for counters (fdp__stats_shard_acquire()
 * in lib/rule.h, or FDP__STATS_SHARED). */
void fdp__meter_run(struct fdp__meter *m, const uint32_t sizes[], uint32_t n,
                    uint64_t now_ns, unsigned int shard, int8_t fired[]);

/* Runs the 'n' packets 'pkts' through meter 'id' and sets keep[i] to
 * false for those a drop band dropped; those a dscp_remark band fired
 * have their DSCP drop precedence raised and are kept.  A meter that does
 * not exist (deleted while the packets were on their way) passes every
 * packet, as in Open vSwitch. */
void fdp__meters_apply(const struct fdp__meters *, uint32_t id,
                       struct fdp__pkt *pkts[], uint32_t n,
                       uint64_t now_ns, unsigned int shard, bool keep[]);

/* The DSCP 'dscp' with its drop precedence (bits 1-2, as the assured
 * forwarding classes of RFC 2597 use them) raised by 'prec_level',
 * saturating at 3. */
uint8_t fdp__meter_remark_dscp(uint8_t dscp, unsigned int prec_level);

/* The datapath's table (datapath/dp.c). */
struct fdp__meters *fdp__dp_meters(const struct fdp_dp *);

#endif /* FDP_METER_H */
