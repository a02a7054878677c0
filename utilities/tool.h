/*
 * Helpers shared by the flowdp programs.
 */
#ifndef FDP_TOOL_H
#define FDP_TOOL_H 1

#include <stdint.h>

/* The program's name for messages; each program defines it. */
extern const char *program_name;

/* Prints "PROGRAM: MESSAGE" to stderr and exits with status 1. */
void fatal(const char *format, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* A new formatted string (the caller frees it), or NULL if out of
 * memory. */
char *xasprintf(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in milliseconds: the clock of flow statistics
 * (struct fdp_rule_stats). */
int64_t monotonic_ms(void);

#endif /* FDP_TOOL_H */
