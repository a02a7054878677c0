/*
 * flowdp: OpenFlow meters (OpenFlow 1.3's meter table, as Open vSwitch's
 * userspace datapath has it).
 *
 * A meter is a set of bands, each a rate (kilobits or packets per second)
 * with a burst.  A flow's "meter:N" instruction sends its packets through
 * meter N first: a packet above a band's rate fires the band (the one
 * with the highest rate among those it exceeds), which drops it (drop)
 * or raises its DSCP drop precedence (dscp_remark) and lets it go on.
 *
 * The text syntax and what the tools print are ovs-ofctl's (Open
 * vSwitch's lib/ofp-meter.c):
 *   meter=N,(kbps|pktps)[,burst][,stats],bands=type=drop,rate=R
 *       [,burst_size=B][,type=dscp_remark,rate=R,prec_level=P...]
 *
 * Thread-safety: the parser and formatters are pure functions.  The
 * datapath's meter functions (fdp_dp_meter_*) are writers: the caller
 * excludes concurrent calls on one datapath, as for ports; packet
 * threads run meters concurrently with them.
 */
#ifndef FLOWDP_METER_H
#define FLOWDP_METER_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OpenFlow 1.3's limits and values. */
#define FDP_METER_MAX_ID 0xffff0000u    /* OFPM13_MAX: the last real id. */
#define FDP_METER_ALL 0xffffffffu       /* OFPM13_ALL, in requests. */
/* Bands per meter and meters per datapath: Open vSwitch's userspace
 * datapath's (MAX_BANDS, MAX_METERS), which meter-features reports. */
#define FDP_METER_MAX_BANDS 8
#define FDP_METER_MAX_METERS 262144

/* Meter flags (OFPMF13_*). */
enum {
    FDP_METER_KBPS = 1 << 0,
    FDP_METER_PKTPS = 1 << 1,
    FDP_METER_BURST = 1 << 2,
    FDP_METER_STATS = 1 << 3,
};

/* Band types (OFPMBT13_*). */
enum fdp_meter_band_type {
    FDP_METER_BAND_DROP = 1,
    FDP_METER_BAND_DSCP_REMARK = 2,
};

struct fdp_meter_band {
    uint8_t type;               /* enum fdp_meter_band_type. */
    uint8_t prec_level;         /* dscp_remark: drop precedence to add. */
    uint32_t rate;              /* kbps or pktps, as the meter's flags. */
    uint32_t burst_size;        /* kilobits or packets; 0: none given. */
};

struct fdp_meter_config {
    uint32_t id;                /* 1..FDP_METER_MAX_ID, or FDP_METER_ALL
                                 * in a request that names every meter. */
    uint16_t flags;             /* FDP_METER_*. */
    uint16_t n_bands;
    struct fdp_meter_band bands[FDP_METER_MAX_BANDS];
};

struct fdp_meter_stats {
    uint32_t id;
    uint32_t flow_count;        /* Flows that use the meter (the caller's:
                                 * the datapath does not know flows). */
    uint64_t packet_in_count;
    uint64_t byte_in_count;
    uint64_t duration_ns;       /* Since the meter was added or modified. */
    uint16_t n_bands;
    struct {
        uint64_t packet_count;  /* Packets that fired the band. */
        uint64_t byte_count;
    } bands[FDP_METER_MAX_BANDS];
};

/* What a meter command's text must hold. */
enum fdp_meter_command {
    FDP_METER_CMD_ADD,          /* meter=N, flags, bands. */
    FDP_METER_CMD_MOD,          /* the same. */
    FDP_METER_CMD_DEL,          /* meter=N or meter=all (or nothing). */
    FDP_METER_CMD_DUMP,         /* the same, for dump-meters and
                                 * meter-stats. */
};

/* Parses 'text' as ovs-ofctl parses a meter for 'command' into
 * '*config'.  For DEL and DUMP an empty text or "meter=all" gives id
 * FDP_METER_ALL.  Returns 0, or EINVAL with a message in '*errorp' (which
 * the caller frees) naming the token at fault and its column. */
FDP_API int fdp_meter_parse(const char *text, enum fdp_meter_command command,
                            struct fdp_meter_config *config, char **errorp);

/* The text ovs-ofctl prints for a meter in dump-meters, ending in a new
 * line: "meter=1 pktps burst stats bands=\ntype=drop rate=10
 * burst_size=5\n".  NULL if out of memory; the caller frees it. */
FDP_API char *fdp_meter_format_config(const struct fdp_meter_config *);

/* The text ovs-ofctl prints for a meter's statistics in meter-stats:
 * "meter:1 flow_count:0 packet_in_count:0 byte_in_count:0 duration:1.5s
 * bands:\n0: packet_count:0 byte_count:0\n".  NULL if out of memory. */
FDP_API char *fdp_meter_format_stats(const struct fdp_meter_stats *);

/* meter-features, as ovs-ofctl prints the reply's body. */
FDP_API char *fdp_meter_format_features(void);

/* ---- A datapath's meters ---- */

struct fdp_dp;

/* Adds meter 'config->id' ('create') or replaces its bands and flags
 * (not 'create'), with its buckets full and its counters at zero, as
 * Open vSwitch's datapath does on both.  Returns 0, or
 *   EEXIST   create, and the meter exists;
 *   ENOENT   not create, and it does not;
 *   EINVAL   a bad id, no bands, or a band with a zero rate;
 *   ENOSPC   FDP_METER_MAX_METERS meters exist;
 *   ENOMEM. */
FDP_API int fdp_dp_meter_set(struct fdp_dp *, const struct fdp_meter_config *,
                             bool create);

/* Removes meter 'id'.  Returns 0 or ENOENT. */
FDP_API int fdp_dp_meter_del(struct fdp_dp *, uint32_t id);

/* The configuration and counters of meter 'id' (either pointer may be
 * NULL; 'stats->flow_count' is left 0).  Returns 0 or ENOENT. */
FDP_API int fdp_dp_meter_get(struct fdp_dp *, uint32_t id,
                             struct fdp_meter_config *,
                             struct fdp_meter_stats *);

/* Stores the ids of up to 'max' meters in 'ids', in increasing order, and
 * returns how many meters there are. */
FDP_API size_t fdp_dp_meter_list(struct fdp_dp *, uint32_t *ids, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_METER_H */
