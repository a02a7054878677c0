/*
 * Internal CPU feature probes and the one dispatch helper every module
 * with several instruction-set implementations uses (STYLE.md 9).
 *
 * A module describes its implementations in one table, best first, whose
 * rows begin with a struct fdp__cpu_impl: {name, level, probe} followed by
 * the module's functions.  fdp__cpu_select() picks the row this process
 * uses: the first whose level the CPU and the build support, whose probe
 * (if any) passes, and whose level FLOWDP_CPU allows.  The last row is
 * the generic one, the specification, which always qualifies.  A module
 * selects once (when it is first used, or when it builds an object such
 * as a pipapo snapshot) and keeps the row; nothing on a lookup path asks
 * which CPU this is.
 *
 * FLOWDP_CPU=validate runs every row the CPU supports beside the generic
 * one and compares; a disagreement goes to fdp__cpu_validate_failed(),
 * the one place lib/ prints and aborts.
 */
#ifndef FDP_CPU_INTERNAL_H
#define FDP_CPU_INTERNAL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <flowdp/cpu.h>

/* True if this CPU and this build can run code of 'level', whatever
 * FLOWDP_CPU says.  Tests use it to run every usable implementation. */
bool fdp__cpu_supports(enum fdp_cpu_level level);

/* True if code of 'level' may be chosen: the CPU supports it and FLOWDP_CPU
 * does not lower the level below it.  Runs fdp_cpu_init() if needed. */
bool fdp__cpu_allows(enum fdp_cpu_level level);

/* The head of one row of a module's dispatch table. */
struct fdp__cpu_impl {
    const char *name;           /* Shown by tests and benchmarks. */
    enum fdp_cpu_level level;   /* What the row's code needs. */
    bool (*probe)(void);        /* A further check, or NULL where the
                                 * level is all the row needs. */
};

/* True if this CPU and build can run 'impl', whatever FLOWDP_CPU says:
 * the rows FLOWDP_CPU=validate and the tests compare. */
bool fdp__cpu_impl_runs(const struct fdp__cpu_impl *impl);

/* True if 'impl' may be chosen: it runs here and FLOWDP_CPU allows its
 * level. */
bool fdp__cpu_impl_allowed(const struct fdp__cpu_impl *impl);

/* The index of the row to use among the 'n' rows of a dispatch table
 * whose first row's head is 'rows' and whose rows are 'stride' bytes
 * apart: the first row fdp__cpu_impl_allowed() accepts.  The last row
 * must be generic (level FDP_CPU_GENERIC, no probe).  Runs fdp_cpu_init()
 * if needed.  Use FDP__CPU_SELECT(). */
size_t fdp__cpu_select(const struct fdp__cpu_impl *rows, size_t n,
                       size_t stride);

/* fdp__cpu_select() over the array 'ROWS' of 'N' rows, each a struct
 * whose member 'cpu' is its struct fdp__cpu_impl. */
#define FDP__CPU_SELECT(ROWS, N) \
    fdp__cpu_select(&(ROWS)[0].cpu, (N), sizeof (ROWS)[0])

/* The row of 'n' rows at 'rows' with index 'i' (see fdp__cpu_select()). */
static inline const struct fdp__cpu_impl *
fdp__cpu_row(const struct fdp__cpu_impl *rows, size_t i, size_t stride)
{
    return (const struct fdp__cpu_impl *) ((const char *) rows + i * stride);
}

/* FLOWDP_CPU=validate found an implementation disagreeing with the
 * generic one: prints "flowdp: FLOWDP_CPU=validate: " and the message
 * to stderr and aborts (Open vSwitch's dpcls autovalidator does the
 * same).  A debugging level: a wrong lookup is a bug that must not go
 * unnoticed. */
void fdp__cpu_validate_failed(const char *format, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#endif /* FDP_CPU_INTERNAL_H */
