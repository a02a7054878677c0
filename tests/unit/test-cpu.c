/*
 * Unit tests for lib/cpu.c.
 *
 * Check runs each test in its own forked process, so each can set
 * FLOWDP_CPU before the library's one-time detection runs.
 */
#include <config.h>

#include <errno.h>
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
    ck_assert_str_eq(fdp__hash_selected()->name, "generic");
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
        ck_assert_int_le(fdp__hash_selected()->level, want);
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
    }
    return unit_run(s);
}
