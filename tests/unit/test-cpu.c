/*
 * Unit tests for lib/cpu.c.
 *
 * Check runs each test in its own forked process, so each can set
 * FLOWDP_CPU before the library's one-time detection runs.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cpu-internal.h"
#include "lib/hash-private.h"
#include "unit.h"

START_TEST(level_names)
{
    for (int i = 0; i < FDP_CPU_N_LEVELS; i++) {
        enum fdp_cpu_level level;
        ck_assert(fdp_cpu_level_from_name(fdp_cpu_level_name(i), &level));
        ck_assert_int_eq(level, i);
    }
    enum fdp_cpu_level level = FDP_CPU_AVX2;
    ck_assert(!fdp_cpu_level_from_name("", &level));
    ck_assert(!fdp_cpu_level_from_name("AVX2", &level));
    ck_assert(!fdp_cpu_level_from_name("avx512", &level));
    ck_assert(!fdp_cpu_level_from_name("sse42 ", &level));
    ck_assert_int_eq(level, FDP_CPU_AVX2);
    ck_assert_str_eq(fdp_cpu_level_name(FDP_CPU_N_LEVELS), "unknown");
}
END_TEST

START_TEST(default_is_detected)
{
    unsetenv("FLOWDP_CPU");
    ck_assert_int_eq(fdp_cpu_init(), 0);
    ck_assert_str_eq(fdp_cpu_strerror(), "");
    ck_assert_int_eq(fdp_cpu_level(), fdp_cpu_detected());
    ck_assert(fdp__cpu_supports(FDP_CPU_GENERIC));
    ck_assert(fdp__cpu_allows(fdp_cpu_detected()));
}
END_TEST

START_TEST(force_generic)
{
    setenv("FLOWDP_CPU", "generic", 1);
    ck_assert_int_eq(fdp_cpu_init(), 0);
    ck_assert_int_eq(fdp_cpu_level(), FDP_CPU_GENERIC);
    ck_assert(!fdp__cpu_allows(FDP_CPU_SSE42));
    ck_assert_str_eq(fdp__hash_selected()->cpu.name, "generic");
    ck_assert_str_eq(fdp_hash_fast_name(), "jhash2");
    /* The CRC is the same, computed in software. */
    ck_assert_uint_eq(fdp_crc32c(0, "123456789", 9), 0xe3069283);
}
END_TEST

START_TEST(force_each_supported_level)
{
    /* Pick the level from the iteration index: each test run is a fresh
     * process. */
    enum fdp_cpu_level want = (enum fdp_cpu_level) _i;
    setenv("FLOWDP_CPU", fdp_cpu_level_name(want), 1);
    if (want <= fdp_cpu_detected()) {
        ck_assert_int_eq(fdp_cpu_init(), 0);
        ck_assert_int_eq(fdp_cpu_level(), want);
        ck_assert_int_le(fdp__hash_selected()->cpu.level, want);
    } else {
        /* Asking for more than the CPU has is an error, not a crash; the
         * library falls back to generic code. */
        ck_assert_int_eq(fdp_cpu_init(), ENOTSUP);
        ck_assert_ptr_nonnull(strstr(fdp_cpu_strerror(),
                                     fdp_cpu_level_name(want)));
        ck_assert_int_eq(fdp_cpu_level(), FDP_CPU_GENERIC);
    }
}
END_TEST

START_TEST(bad_name_is_an_error)
{
    setenv("FLOWDP_CPU", "pentium4", 1);
    ck_assert_int_eq(fdp_cpu_init(), EINVAL);
    ck_assert_int_eq(fdp_cpu_init(), EINVAL);   /* Stable. */
    ck_assert_ptr_nonnull(strstr(fdp_cpu_strerror(), "FLOWDP_CPU=pentium4"));
    ck_assert_int_eq(fdp_cpu_level(), FDP_CPU_GENERIC);
    ck_assert_uint_eq(fdp_crc32c(0, "123456789", 9), 0xe3069283);
}
END_TEST

/* A dispatch table as a module writes one: a row per level, best first,
 * and one whose probe always fails. */
static bool
probe_never(void)
{
    return false;
}

struct test_impl {
    struct fdp__cpu_impl cpu;
    int value;
};
static const struct test_impl test_impls[] = {
    { { "avx2", FDP_CPU_AVX2, NULL }, 2 },
    { { "never", FDP_CPU_GENERIC, probe_never }, -1 },
    { { "sse42", FDP_CPU_SSE42, NULL }, 1 },
    { { "generic", FDP_CPU_GENERIC, NULL }, 0 },
};

/* fdp__cpu_select() takes the first row the CPU runs, whose probe passes
 * and whose level FLOWDP_CPU allows, for each FLOWDP_CPU level. */
START_TEST(select_follows_flowdp_cpu)
{
    enum fdp_cpu_level want = (enum fdp_cpu_level) _i;
    setenv("FLOWDP_CPU", fdp_cpu_level_name(want), 1);
    fdp_cpu_init();

    size_t i = FDP__CPU_SELECT(test_impls, FDP_ARRAY_SIZE(test_impls));
    const struct test_impl *impl = &test_impls[i];
    ck_assert_int_eq(impl->value, (int) fdp_cpu_level());
    ck_assert(fdp__cpu_impl_allowed(&impl->cpu));
    ck_assert(!fdp__cpu_impl_runs(&test_impls[1].cpu));
    ck_assert(fdp__cpu_impl_runs(&test_impls[3].cpu));
    /* A table of the generic row alone always selects it. */
    ck_assert_uint_eq(FDP__CPU_SELECT(&test_impls[3], 1), 0);
}
END_TEST

/* The validation-failure helper aborts (Check expects SIGABRT). */
START_TEST(validate_failure_aborts)
{
    fdp__cpu_validate_failed("test %s found %d where generic found %d",
                             "row", 1, 2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("cpu");
    TCase *tc = unit_tcase(s, "cpu");

    tcase_add_test(tc, level_names);
    const char *ck_fork = getenv("CK_FORK");
    if (!ck_fork || strcmp(ck_fork, "no")) {
        tcase_add_test(tc, default_is_detected);
        tcase_add_test(tc, force_generic);
        tcase_add_loop_test(tc, force_each_supported_level, 0,
                            FDP_CPU_N_LEVELS);
        tcase_add_test(tc, bad_name_is_an_error);
        tcase_add_loop_test(tc, select_follows_flowdp_cpu, 0,
                            FDP_CPU_N_LEVELS);
        tcase_add_test_raise_signal(tc, validate_failure_aborts, SIGABRT);
    }
    return unit_run(s);
}
