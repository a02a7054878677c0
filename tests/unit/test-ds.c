/*
 * Unit tests for lib/ds.c, the growable string every formatter (flow text,
 * dump-flows lines, flowdpd's JSON replies) writes into.
 *
 * The reference is a plain fixed-size buffer filled with snprintf() and
 * memcpy(): random sequences of every append, clear and chomp go to both,
 * and after each step the string, its length and its NUL must agree.  The
 * edge cases are tested by name: the first allocation, each doubling,
 * fdp__ds_printf()'s 128-byte stack buffer (outputs of 127, 128 and 129
 * bytes take its two paths), bytes that are not text (embedded NULs through
 * fdp__ds_put_buffer()), the largest numbers, every escaped JSON byte, and
 * the sticky failure state.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "unit.h"

/* Checks the invariants of a string that has not failed: its text is
 * 'len' bytes equal to 'expect', NUL-terminated, inside its allocation. */
static void
check_ds(const struct fdp__ds *ds, const char *expect, size_t len)
{
    ck_assert(!fdp__ds_failed(ds));
    ck_assert_uint_eq(ds->len, len);
    if (!ds->s) {
        ck_assert_uint_eq(len, 0);
        ck_assert_uint_eq(ds->alloc, 0);
        ck_assert_str_eq(fdp__ds_cstr(ds), "");
        return;
    }
    ck_assert_uint_gt(ds->alloc, ds->len);
    ck_assert_int_eq(ds->s[ds->len], '\0');
    ck_assert(!memcmp(ds->s, expect, len));
    ck_assert_ptr_eq(fdp__ds_cstr(ds), ds->s);
}

START_TEST(empty_string)
{
    struct fdp__ds ds = FDP__DS_INIT;

    /* Nothing allocated until the first byte; cstr is still a string. */
    check_ds(&ds, "", 0);
    fdp__ds_chomp(&ds, '\n');
    fdp__ds_clear(&ds);
    check_ds(&ds, "", 0);

    /* Appending nothing allocates room for the NUL and stays empty. */
    fdp__ds_put(&ds, "");
    fdp__ds_put_buffer(&ds, "ignored", 0);
    fdp__ds_printf(&ds, "%s", "");
    fdp__ds_put_json_chars(&ds, "");
    check_ds(&ds, "", 0);

    /* Stealing an empty string gives "" to free, never NULL. */
    char *s = fdp__ds_steal(&ds);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "");
    free(s);
    ck_assert_ptr_null(ds.s);
    ck_assert_uint_eq(ds.len, 0);

    struct fdp__ds never = FDP__DS_INIT;
    s = fdp__ds_steal(&never);
    ck_assert_str_eq(s, "");
    free(s);

    /* Destroying twice, or an untouched string, is fine. */
    fdp__ds_destroy(&ds);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(growth_doubles_from_64)
{
    struct fdp__ds ds = FDP__DS_INIT;
    char expect[4096];

    /* One byte at a time: the allocation is 64 bytes (ds.c's first size)
     * until 63 bytes and the NUL fill it, then doubles, and the bytes
     * already written survive every move. */
    for (size_t i = 0; i < sizeof expect - 1; i++) {
        expect[i] = (char) ('a' + i % 26);
        fdp__ds_putc(&ds, expect[i]);
        check_ds(&ds, expect, i + 1);
        size_t want = 64;
        while (want < i + 2) {
            want *= 2;
        }
        ck_assert_uint_eq(ds.alloc, want);
    }

    /* clear keeps the memory for reuse. */
    size_t alloc = ds.alloc;
    fdp__ds_clear(&ds);
    check_ds(&ds, "", 0);
    ck_assert_uint_eq(ds.alloc, alloc);
    fdp__ds_put(&ds, "again");
    check_ds(&ds, "again", 5);
    ck_assert_uint_eq(ds.alloc, alloc);
    fdp__ds_destroy(&ds);

    /* One large append grows past several doublings at once. */
    char *big = malloc(100000);
    ck_assert_ptr_nonnull(big);
    memset(big, 'x', 99999);
    big[99999] = '\0';
    fdp__ds_put(&ds, "<");
    fdp__ds_put(&ds, big);
    ck_assert_uint_eq(ds.len, 100000);
    ck_assert_uint_eq(ds.alloc, 131072);
    ck_assert_int_eq(ds.s[0], '<');
    ck_assert(!memcmp(ds.s + 1, big, 99999));
    ck_assert_int_eq(ds.s[100000], '\0');
    free(big);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(buffer_keeps_nul_bytes)
{
    struct fdp__ds ds = FDP__DS_INIT;
    static const char bytes[] = { 'a', '\0', 'b', '\0' };

    /* put_buffer copies n bytes whatever they are; len counts them, so
     * the string may hold NULs that strlen() would stop at. */
    fdp__ds_put_buffer(&ds, bytes, sizeof bytes);
    fdp__ds_put_buffer(&ds, "cd", 1);
    check_ds(&ds, "a\0b\0c", 5);
    ck_assert_uint_eq(strlen(fdp__ds_cstr(&ds)), 1);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(printf_both_paths)
{
    /* ds.c formats into a 128-byte buffer first: outputs of up to 127
     * bytes fit, 128 or more are formatted again in place. */
    static const size_t lens[] = { 0, 1, 63, 64, 126, 127, 128, 129, 255,
                                   256, 1000, 70000 };
    char *pad = malloc(70001);

    ck_assert_ptr_nonnull(pad);
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        for (size_t prefix = 0; prefix < 3; prefix++) {
            struct fdp__ds ds = FDP__DS_INIT;
            char *expect = malloc(prefix + lens[i] + 1);

            ck_assert_ptr_nonnull(expect);
            memset(expect, 'p', prefix);
            fdp__ds_put_buffer(&ds, expect, prefix);
            memset(pad, '.', lens[i]);
            pad[lens[i]] = '\0';
            /* Width and precision, so the output length is the format's,
             * not the argument's. */
            fdp__ds_printf(&ds, "%-*.*s", (int) lens[i], (int) lens[i], pad);
            memset(expect + prefix, '.', lens[i]);
            expect[prefix + lens[i]] = '\0';
            check_ds(&ds, expect, prefix + lens[i]);
            free(expect);
            fdp__ds_destroy(&ds);
        }
    }
    free(pad);

    /* Conversions as printf does them, across the 128-byte boundary. */
    struct fdp__ds ds = FDP__DS_INIT;
    fdp__ds_printf(&ds, "%d|%x|%s|%c|%05.1f|%%", -42, 0xbeefu, "str", 'c',
                   2.25);
    check_ds(&ds, "-42|beef|str|c|002.2|%", 22);
    fdp__ds_clear(&ds);
    fdp__ds_printf(&ds, "%130d|%" PRIu64, 7, UINT64_MAX);
    char expect[200];
    int n = snprintf(expect, sizeof expect, "%130d|%" PRIu64, 7, UINT64_MAX);
    check_ds(&ds, expect, (size_t) n);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(numbers_as_printf)
{
    static const uint64_t values[] = {
        0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 65535, 65536,
        UINT32_MAX, (uint64_t) UINT32_MAX + 1, UINT64_C(10000000000000000000),
        INT64_MAX, UINT64_MAX - 1, UINT64_MAX,
    };
    struct unit_rng rng;

    unit_rng_init(&rng, 1);
    for (size_t i = 0; i < sizeof values / sizeof *values + 10000; i++) {
        uint64_t v = (i < sizeof values / sizeof *values ? values[i]
                      : unit_rng_next(&rng) >> unit_rng_below(&rng, 64));
        struct fdp__ds ds = FDP__DS_INIT;
        char expect[64];

        fdp__ds_put_uint(&ds, v);
        fdp__ds_putc(&ds, ' ');
        fdp__ds_put_hex(&ds, v);
        int n = snprintf(expect, sizeof expect, "%" PRIu64 " %" PRIx64, v, v);
        ck_assert_msg(ds.len == (size_t) n && !strcmp(ds.s, expect),
                      "%" PRIu64 ": \"%s\", expected \"%s\" (seed %" PRIu64
                      ")", v, ds.s, expect, unit_seed());
        fdp__ds_destroy(&ds);
    }
}
END_TEST

START_TEST(chomp_removes_one)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_put(&ds, "a,b,,");
    fdp__ds_chomp(&ds, ',');
    check_ds(&ds, "a,b,", 4);
    fdp__ds_chomp(&ds, '\n');   /* Another byte: nothing. */
    check_ds(&ds, "a,b,", 4);
    fdp__ds_chomp(&ds, ',');
    fdp__ds_chomp(&ds, 'b');
    fdp__ds_chomp(&ds, ',');
    fdp__ds_chomp(&ds, 'a');
    check_ds(&ds, "", 0);
    fdp__ds_chomp(&ds, 'a');    /* Empty, allocated: nothing. */
    check_ds(&ds, "", 0);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(json_escapes)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_put_json_string(&ds, "");
    check_ds(&ds, "\"\"", 2);
    fdp__ds_clear(&ds);

    fdp__ds_put_json_string(&ds, "a\"b\\c/d\n\t\x01\x1f\x20\x7f");
    static const char escaped[] =
        "\"a\\\"b\\\\c/d\\u000a\\u0009\\u0001\\u001f \x7f\"";
    check_ds(&ds, escaped, sizeof escaped - 1);
    fdp__ds_clear(&ds);

    /* UTF-8 and other bytes above 0x7f go through as they are. */
    fdp__ds_put_json_chars(&ds, "caf\xc3\xa9 \xff");
    check_ds(&ds, "caf\xc3\xa9 \xff", 7);
    fdp__ds_clear(&ds);

    /* Every byte from 1 to 255, against a byte-by-byte reference. */
    char in[256], expect[256 * 6 + 1];
    size_t n = 0;
    for (int c = 1; c < 256; c++) {
        in[c - 1] = (char) c;
        if (c < 0x20) {
            n += (size_t) snprintf(expect + n, sizeof expect - n, "\\u%04x",
                                   c);
        } else if (c == '"' || c == '\\') {
            expect[n++] = '\\';
            expect[n++] = (char) c;
        } else {
            expect[n++] = (char) c;
        }
    }
    in[255] = '\0';
    expect[n] = '\0';
    fdp__ds_put_json_chars(&ds, in);
    check_ds(&ds, expect, n);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(failure_is_sticky)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_put(&ds, "kept");
    /* What an allocation failure leaves (ds.c sets the flag when realloc
     * fails; the test cannot make realloc fail). */
    ds.failed = true;
    fdp__ds_put(&ds, "lost");
    fdp__ds_putc(&ds, '!');
    fdp__ds_printf(&ds, "%200s", "lost");
    fdp__ds_put_uint(&ds, 5);
    fdp__ds_put_hex(&ds, 5);
    fdp__ds_put_json_string(&ds, "lost");
    ck_assert(fdp__ds_failed(&ds));
    ck_assert_uint_eq(ds.len, 4);
    ck_assert_str_eq(fdp__ds_cstr(&ds), "kept");

    /* clear keeps the failure: a formatter that ignored it still
     * returns ENOMEM at the end. */
    fdp__ds_clear(&ds);
    fdp__ds_put(&ds, "x");
    ck_assert(fdp__ds_failed(&ds));
    ck_assert_uint_eq(ds.len, 0);

    /* steal returns NULL and frees what the string held. */
    ck_assert_ptr_null(fdp__ds_steal(&ds));
    ck_assert(!fdp__ds_failed(&ds));
    ck_assert_ptr_null(ds.s);

    /* A destroyed string is a fresh one. */
    fdp__ds_put(&ds, "new");
    check_ds(&ds, "new", 3);
    fdp__ds_destroy(&ds);
}
END_TEST

START_TEST(xasprintf_formats)
{
    char *s = fdp__xasprintf("%s=%d", "n_packets", 12);

    ck_assert_str_eq(s, "n_packets=12");
    free(s);
    s = fdp__xasprintf("%s", "");
    ck_assert_str_eq(s, "");
    free(s);
    s = fdp__xasprintf("%300s", "x");
    ck_assert_uint_eq(strlen(s), 300);
    ck_assert_int_eq(s[299], 'x');
    free(s);
}
END_TEST

/* Random operations against the reference buffer. */
enum { REF_SIZE = 1 << 16 };

START_TEST(random_ops_match_reference)
{
    struct unit_rng rng;
    char *ref = malloc(REF_SIZE);
    char piece[300];

    ck_assert_ptr_nonnull(ref);
    unit_rng_init(&rng, 2);
    for (int round = 0; round < 200; round++) {
        struct fdp__ds ds = FDP__DS_INIT;
        size_t len = 0;

        for (int op = 0; op < 200; op++) {
            size_t n = unit_rng_below(&rng, sizeof piece - 1);
            for (size_t i = 0; i < n; i++) {
                piece[i] = (char) (' ' + unit_rng_below(&rng, 95));
            }
            piece[n] = '\0';
            if (len + n + 64 >= REF_SIZE) {
                break;
            }
            uint64_t v = unit_rng_next(&rng);
            switch (unit_rng_below(&rng, 8)) {
            case 0:
                fdp__ds_put(&ds, piece);
                memcpy(ref + len, piece, n);
                len += n;
                break;
            case 1:
                fdp__ds_put_buffer(&ds, piece, n / 2);
                memcpy(ref + len, piece, n / 2);
                len += n / 2;
                break;
            case 2:
                fdp__ds_putc(&ds, piece[0] ? piece[0] : '~');
                ref[len++] = piece[0] ? piece[0] : '~';
                break;
            case 3:
                fdp__ds_printf(&ds, "[%s]%" PRIu64, piece, v);
                len += (size_t) snprintf(ref + len, REF_SIZE - len,
                                         "[%s]%" PRIu64, piece, v);
                break;
            case 4:
                fdp__ds_put_uint(&ds, v);
                len += (size_t) snprintf(ref + len, REF_SIZE - len,
                                         "%" PRIu64, v);
                break;
            case 5:
                fdp__ds_put_hex(&ds, v);
                len += (size_t) snprintf(ref + len, REF_SIZE - len,
                                         "%" PRIx64, v);
                break;
            case 6:
                fdp__ds_chomp(&ds, ']');
                if (len && ref[len - 1] == ']') {
                    len--;
                }
                break;
            case 7:
                if (unit_rng_below(&rng, 8) == 0) {
                    fdp__ds_clear(&ds);
                    len = 0;
                }
                break;
            }
            ck_assert_msg(ds.len == len && (!len || !memcmp(ds.s, ref, len)),
                          "round %d, op %d: the string differs from the "
                          "reference (seed %" PRIu64 ")", round, op,
                          unit_seed());
            if (ds.s) {
                ck_assert_int_eq(ds.s[ds.len], '\0');
                ck_assert_uint_gt(ds.alloc, ds.len);
            }
        }
        char *s = fdp__ds_steal(&ds);
        ck_assert_uint_eq(strlen(s), len);
        ck_assert(!memcmp(s, ref, len));
        free(s);
    }
    free(ref);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ds");
    TCase *tc = unit_tcase(s, "ds");

    tcase_add_test(tc, empty_string);
    tcase_add_test(tc, growth_doubles_from_64);
    tcase_add_test(tc, buffer_keeps_nul_bytes);
    tcase_add_test(tc, printf_both_paths);
    tcase_add_test(tc, numbers_as_printf);
    tcase_add_test(tc, chomp_removes_one);
    tcase_add_test(tc, json_escapes);
    tcase_add_test(tc, failure_is_sticky);
    tcase_add_test(tc, xasprintf_formats);
    tcase_add_test(tc, random_ops_match_reference);
    return unit_run(s);
}
