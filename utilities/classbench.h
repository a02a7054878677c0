/*
 * ClassBench rule sets and traces (../shared/data/classbench/README.md),
 * for flowdp-bench's table suite and the table's unit test.
 *
 * Rule line (file order is priority order):
 *   @SRC/LEN  DST/LEN  SPORT_LO : SPORT_HI  DPORT_LO : DPORT_HI  PROTO/MASK ...
 * Trace line: SRC DST SPORT DPORT PROTO FLAGS FILTER (numbers).
 */
#ifndef FDP_CLASSBENCH_H
#define FDP_CLASSBENCH_H 1

#include <stdbool.h>
#include <stdint.h>

#include "flowdp/key.h"
#include "flowdp/match.h"

/* Fills 'm' (a match from fdp_match_create()) from a rule line: IPv4,
 * source and destination prefixes, port ranges, protocol/mask.  Returns
 * false if the line is not a rule. */
bool classbench_parse_rule(const char *line, struct fdp_match *m);

/* Parses a trace line into a key; false if it is not one. */
bool classbench_parse_header(const char *line, struct fdp_key *key);

/* The key of an IPv4 5-tuple, as the rules match it. */
void classbench_key(struct fdp_key *key, uint32_t src, uint32_t dst,
                    uint32_t sport, uint32_t dport, uint32_t proto);

#endif /* FDP_CLASSBENCH_H */
