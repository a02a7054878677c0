/*
 * CPU feature detection and the FLOWDP_CPU override.
 *
 * Detection runs once per process (pthread_once).  On x86-64 it reads CPUID
 * and, for AVX2, XCR0 through XGETBV, because a CPU that has AVX2 is of no
 * use if the operating system does not save the YMM registers on a context
 * switch.  The result is capped by what this build compiled (a compiler
 * without -mavx2 support produces no AVX2 code to run).
 *
 * FLOWDP_CPU lowers the level, so that every implementation can be tested
 * and benchmarked on one machine.  Asking for a level the CPU lacks is an
 * error reported by fdp_cpu_init(); the library then runs generic code,
 * which is correct everywhere, and never aborts.
 */
#include <config.h>

#include "lib/cpu-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "lib/util.h"

static const char *const level_names[FDP_CPU_N_LEVELS] = {
    [FDP_CPU_GENERIC] = "generic",
    [FDP_CPU_SSE42] = "sse42",
    [FDP_CPU_AVX2] = "avx2",
};

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static enum fdp_cpu_level cpu_detected = FDP_CPU_GENERIC;
static enum fdp_cpu_level cpu_selected = FDP_CPU_GENERIC;
static bool cpu_validate;          /* FLOWDP_CPU=validate. */
static int cpu_error;
static char cpu_error_msg[160];

#if defined(__x86_64__) || defined(__i386__)
/* CPUID leaf 1 ECX and leaf 7 EBX bits (Intel SDM vol. 2A, CPUID). */
enum {
    CPUID1_ECX_PCLMULQDQ = 1u << 1,
    CPUID1_ECX_SSE42 = 1u << 20,
    CPUID1_ECX_OSXSAVE = 1u << 27,
    CPUID1_ECX_AVX = 1u << 28,
    CPUID7_EBX_AVX2 = 1u << 5,
};

/* XCR0 bits 1 (SSE state) and 2 (AVX state): both must be enabled by the
 * OS before YMM registers may be used. */
#define XCR0_SSE_AVX 0x6u

static uint64_t
read_xcr0(void)
{
    uint32_t eax, edx;

    /* XGETBV with ECX = 0, spelled as bytes so that this file needs no
     * -mxsave. */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t) edx << 32) | eax;
}

static enum fdp_cpu_level
detect_x86(void)
{
    unsigned int eax, ebx, ecx, edx;
    enum fdp_cpu_level level = FDP_CPU_GENERIC;

    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return level;
    }
    bool sse42 = (ecx & CPUID1_ECX_SSE42) && (ecx & CPUID1_ECX_PCLMULQDQ);
    bool avx_os = (ecx & CPUID1_ECX_AVX) && (ecx & CPUID1_ECX_OSXSAVE)
                  && (read_xcr0() & XCR0_SSE_AVX) == XCR0_SSE_AVX;
    if (!sse42) {
        return level;
    }
#ifdef FDP_HAVE_SSE42
    level = FDP_CPU_SSE42;
#else
    return level;
#endif

    unsigned int ebx7 = 0;
    if (avx_os && __get_cpuid_count(7, 0, &eax, &ebx7, &ecx, &edx)
        && (ebx7 & CPUID7_EBX_AVX2)) {
#ifdef FDP_HAVE_AVX2
        level = FDP_CPU_AVX2;
#endif
    }
    return level;
}
#endif

static void
cpu_detect_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    cpu_detected = detect_x86();
#else
    cpu_detected = FDP_CPU_GENERIC;
#endif
    cpu_selected = cpu_detected;

    const char *env = getenv("FLOWDP_CPU");
    if (!env || !*env) {
        return;
    }

    enum fdp_cpu_level want;
    if (!strcmp(env, "validate")) {
        /* The best level, and every lookup checked against the generic
         * code of each module that has several (lib/pipapo.c). */
        cpu_validate = true;
    } else if (!fdp_cpu_level_from_name(env, &want)) {
        cpu_error = EINVAL;
        snprintf(cpu_error_msg, sizeof cpu_error_msg,
                 "FLOWDP_CPU=%.40s is not a CPU level "
                 "(use generic, sse42, avx2 or validate)", env);
        cpu_selected = FDP_CPU_GENERIC;
    } else if (want > cpu_detected) {
        cpu_error = ENOTSUP;
        snprintf(cpu_error_msg, sizeof cpu_error_msg,
                 "FLOWDP_CPU=%s: this CPU or build supports at most %s",
                 level_names[want], level_names[cpu_detected]);
        cpu_selected = FDP_CPU_GENERIC;
    } else {
        cpu_selected = want;
    }
}

int
fdp_cpu_init(void)
{
    pthread_once(&cpu_once, cpu_detect_once);
    return cpu_error;
}

const char *
fdp_cpu_strerror(void)
{
    fdp_cpu_init();
    return cpu_error_msg;
}

enum fdp_cpu_level
fdp_cpu_level(void)
{
    fdp_cpu_init();
    return cpu_selected;
}

enum fdp_cpu_level
fdp_cpu_detected(void)
{
    fdp_cpu_init();
    return cpu_detected;
}

const char *
fdp_cpu_level_name(enum fdp_cpu_level level)
{
    return (unsigned int) level < FDP_CPU_N_LEVELS ? level_names[level]
                                                  : "unknown";
}

bool
fdp_cpu_level_from_name(const char *name, enum fdp_cpu_level *level)
{
    for (size_t i = 0; i < FDP_ARRAY_SIZE(level_names); i++) {
        if (!strcmp(name, level_names[i])) {
            *level = (enum fdp_cpu_level) i;
            return true;
        }
    }
    return false;
}

bool
fdp__cpu_supports(enum fdp_cpu_level level)
{
    return level <= fdp_cpu_detected();
}

bool
fdp__cpu_allows(enum fdp_cpu_level level)
{
    return level <= fdp_cpu_level();
}

bool
fdp_cpu_validating(void)
{
    fdp_cpu_init();
    return cpu_validate;
}

bool
fdp__cpu_impl_runs(const struct fdp__cpu_impl *impl)
{
    return fdp__cpu_supports(impl->level) && (!impl->probe || impl->probe());
}

bool
fdp__cpu_impl_allowed(const struct fdp__cpu_impl *impl)
{
    return fdp__cpu_impl_runs(impl) && fdp__cpu_allows(impl->level);
}

size_t
fdp__cpu_select(const struct fdp__cpu_impl *rows, size_t n, size_t stride)
{
    fdp_cpu_init();
    for (size_t i = 0; i + 1 < n; i++) {
        if (fdp__cpu_impl_allowed(fdp__cpu_row(rows, i, stride))) {
            return i;
        }
    }
    /* The generic row, which every CPU runs. */
    return n - 1;
}

void
fdp__cpu_validate_failed(const char *format, ...)
{
    va_list args;

    fputs("flowdp: FLOWDP_CPU=validate: ", stderr);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    abort();
}
