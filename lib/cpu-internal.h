/*
 * Internal CPU feature probes for the per-module implementation tables.
 */
#ifndef FDP_CPU_INTERNAL_H
#define FDP_CPU_INTERNAL_H 1

#include <stdbool.h>
#include <flowdp/cpu.h>

/* True if this CPU and this build can run code of 'level', whatever
 * FLOWDP_CPU says.  Tests use it to run every usable implementation. */
bool fdp__cpu_supports(enum fdp_cpu_level level);

/* True if code of 'level' may be chosen: the CPU supports it and FLOWDP_CPU
 * does not lower the level below it.  Runs fdp_cpu_init() if needed. */
bool fdp__cpu_allows(enum fdp_cpu_level level);

#endif /* FDP_CPU_INTERNAL_H */
