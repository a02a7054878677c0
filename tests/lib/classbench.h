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
#include <stddef.h>
#include <stdint.h>

#include <flowdp/key.h>
#include <flowdp/match.h>

/* Fills 'm' (a match from fdp_match_create()) from a rule line: IPv4,
 * source and destination prefixes, port ranges, protocol/mask.  Returns
 * false if the line is not a rule. */
bool classbench_parse_rule(const char *line, struct fdp_match *m);

/* Parses a trace line into a key; false if it is not one. */
bool classbench_parse_header(const char *line, struct fdp_key *key);

/* The ClassBench rule 'line' as a flow in ovs-ofctl syntax, with
 * 'priority', 'cookie' and "actions=output:1", in 'buf' ('size' bytes):
 * what a user would write for it ("priority=9,cookie=0x4,tcp,
 * nw_src=10.0.0.0/8,tp_dst=1024-65535,actions=output:1").  False if
 * 'line' is not a rule or 'buf' is too small. */
bool classbench_rule_text(const char *line, unsigned int priority,
                          unsigned long long cookie, char *buf, size_t size);

/* The key of an IPv4 5-tuple, as the rules match it. */
void classbench_key(struct fdp_key *key, uint32_t src, uint32_t dst,
                    uint32_t sport, uint32_t dport, uint32_t proto);

#endif /* FDP_CLASSBENCH_H */
