/*
 * flowdp: CPU feature levels and run-time selection of SIMD code.
 *
 * Every module with code for a newer instruction set keeps a table of
 * implementations and uses the best one allowed by the selected level.  The
 * level is detected once, at the first call of fdp_cpu_init() (which every
 * constructor in the library makes), and may be lowered for tests or
 * comparisons with the environment variable FLOWDP_CPU=generic|sse42|avx2.
 *
 * Thread-safety: all functions may be called concurrently from any thread.
 */
#ifndef FLOWDP_CPU_H
#define FLOWDP_CPU_H 1

#include <stdbool.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Instruction-set levels, each including the ones before it. */
enum fdp_cpu_level {
    FDP_CPU_GENERIC,    /* Baseline x86-64, or any other architecture. */
    FDP_CPU_SSE42,      /* SSE4.2 CRC32 and PCLMULQDQ (x86-64 since 2010). */
    FDP_CPU_AVX2,       /* AVX2 with the OS saving YMM state. */
    FDP_CPU_N_LEVELS
};

/* Detects the CPU's features and applies FLOWDP_CPU, once per process.
 * Returns 0 on success, or:
 *   EINVAL   FLOWDP_CPU names no level (it must be generic, sse42, avx2,
 *            or validate: the best level, with every lookup of a module
 *            that has several implementations checked against its
 *            generic code, aborting on a disagreement);
 *   ENOTSUP  FLOWDP_CPU asks for a level this CPU lacks or this build does
 *            not include.
 * On error the library runs at the generic level, and every later call
 * returns the same error; fdp_cpu_strerror() describes it for the user. */
FDP_API int fdp_cpu_init(void);

/* A sentence describing the error fdp_cpu_init() returned, naming the
 * offending FLOWDP_CPU value, or "" when there was none. */
FDP_API const char *fdp_cpu_strerror(void);

/* The level in use (after FLOWDP_CPU), and the best level the CPU and this
 * build support. */
FDP_API enum fdp_cpu_level fdp_cpu_level(void);
FDP_API enum fdp_cpu_level fdp_cpu_detected(void);

/* True under FLOWDP_CPU=validate: the best level is in use, and modules
 * with several implementations (pipapo) run them all on every lookup and
 * abort on the first disagreement with the generic one (a debugging mode:
 * slow, and the one case in which the library aborts). */
FDP_API bool fdp_cpu_validating(void);

/* "generic", "sse42" or "avx2"; "unknown" for an out-of-range value. */
FDP_API const char *fdp_cpu_level_name(enum fdp_cpu_level);

/* Parses a level name as FLOWDP_CPU spells it.  Returns true and stores the
 * level in '*level' if 'name' is one, false otherwise. */
FDP_API bool fdp_cpu_level_from_name(const char *name, enum fdp_cpu_level *level);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_CPU_H */
