/*
 * Helpers shared by the Check unit tests.
 */
#include <config.h>

#include "unit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* Default seed: fixed, so that runs are reproducible unless asked. */
#define UNIT_DEFAULT_SEED UINT64_C(20261130)

/* Seconds a test case may take; sanitizer builds run several times slower
 * than Check's default of 4 s allows. */
#define UNIT_TIMEOUT 300

uint64_t
unit_seed(void)
{
    static uint64_t seed;
    static int done;

    if (!done) {
        const char *env = getenv("FLOWDP_TEST_SEED");
        seed = env ? strtoull(env, NULL, 0) : UNIT_DEFAULT_SEED;
        done = 1;
    }
    return seed;
}

/* Salts 0, 1, 2... are multiplied by 2^64 / golden ratio (odd), which sends
 * consecutive salts far apart in the state space. */
void
unit_rng_init(struct unit_rng *rng, uint64_t salt)
{
    rng->state = unit_seed() ^ (salt * 0x9e3779b97f4a7c15ull);
}

TCase *
unit_tcase(Suite *suite, const char *name)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, UNIT_TIMEOUT);
    suite_add_tcase(suite, tc);
    return tc;
}

int
unit_run(Suite *suite)
{
    SRunner *sr = srunner_create(suite);

    printf("Random seed: %" PRIu64 " (set FLOWDP_TEST_SEED to replay)\n",
           unit_seed());
    fflush(stdout);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
