/*
 * Unit tests for lib/hash.c and lib/hash-sse42.c.
 *
 * Each implementation in fdp__hash_impls[] that this CPU can run is checked
 * against slow, obviously correct references written here: a bit-at-a-time
 * CRC32C and a byte-reading lookup3 (jhash2).  Published test vectors pin
 * the references themselves.
 */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash-private.h"
#include "lib/util.h"
#include "unit.h"

/* ---------------------------------------------------------------------- */
/* References.                                                             */

/* CRC32C one bit at a time: the definition, with no tables. */
static uint32_t
ref_crc32c_raw(uint32_t crc, const uint8_t *p, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        crc ^= p[i];
        for (int bit = 0; bit < 8; bit++) {
            crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0);
        }
    }
    return crc;
}

static void
words_to_le_bytes(const uint64_t *words, size_t n_words, uint8_t *bytes)
{
    for (size_t i = 0; i < n_words; i++) {
        for (int b = 0; b < 8; b++) {
            bytes[8 * i + b] = (uint8_t) (words[i] >> (8 * b));
        }
    }
}

/* Bob Jenkins' lookup3 hashlittle(), reading bytes one at a time.  For a
 * length that is a multiple of 4 it equals hashword(), that is the Linux
 * kernel's jhash2(), over the little-endian 32-bit words. */
static uint32_t
ref_lookup3(const uint8_t *k, size_t length, uint32_t initval)
{
    uint32_t a, b, c;

    a = b = c = 0xdeadbeefu + (uint32_t) length + initval;
    while (length > 12) {
        a += k[0] | (uint32_t) k[1] << 8 | (uint32_t) k[2] << 16
             | (uint32_t) k[3] << 24;
        b += k[4] | (uint32_t) k[5] << 8 | (uint32_t) k[6] << 16
             | (uint32_t) k[7] << 24;
        c += k[8] | (uint32_t) k[9] << 8 | (uint32_t) k[10] << 16
             | (uint32_t) k[11] << 24;
        a -= c; a ^= fdp__rol32(c, 4);  c += b;
        b -= a; b ^= fdp__rol32(a, 6);  a += c;
        c -= b; c ^= fdp__rol32(b, 8);  b += a;
        a -= c; a ^= fdp__rol32(c, 16); c += b;
        b -= a; b ^= fdp__rol32(a, 19); a += c;
        c -= b; c ^= fdp__rol32(b, 4);  b += a;
        length -= 12;
        k += 12;
    }
    if (length == 0) {
        return c;
    }
    uint32_t w[3] = { 0, 0, 0 };
    for (size_t i = 0; i < length; i++) {
        w[i / 4] |= (uint32_t) k[i] << (8 * (i % 4));
    }
    a += w[0];
    b += w[1];
    c += w[2];
    c ^= b; c -= fdp__rol32(b, 14);
    a ^= c; a -= fdp__rol32(c, 11);
    b ^= a; b -= fdp__rol32(a, 25);
    c ^= b; c -= fdp__rol32(b, 16);
    a ^= c; a -= fdp__rol32(c, 4);
    b ^= a; b -= fdp__rol32(a, 14);
    c ^= b; c -= fdp__rol32(b, 24);
    return c;
}

static void
random_words(struct unit_rng *rng, uint64_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        words[i] = unit_rng_next(rng);
    }
}

/* ---------------------------------------------------------------------- */
/* CRC32C.                                                                 */

START_TEST(crc32c_check_value)
{
    /* The standard check value of CRC-32C (the "check" of the CRC
     * catalogues: the CRC of the ASCII digits 1..9). */
    ck_assert_uint_eq(ref_crc32c_raw(~0u, (const uint8_t *) "123456789", 9)
                      ^ ~0u, 0xe3069283);
    ck_assert_uint_eq(fdp_crc32c(0, "123456789", 9), 0xe3069283);
    for (size_t i = 0; i < fdp__hash_n_impls; i++) {
        const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
        if (fdp__cpu_impl_runs(&impl->cpu)) {
            ck_assert_msg(~impl->funcs.crc32c(~0u, "123456789", 9)
                          == 0xe3069283, "impl %s", impl->cpu.name);
        }
    }
    /* Chaining: the CRC of a concatenation. */
    ck_assert_uint_eq(fdp_crc32c(fdp_crc32c(0, "1234", 4), "56789", 5),
                      0xe3069283);
    ck_assert_uint_eq(fdp_crc32c(0, NULL, 0), 0);
}
END_TEST

START_TEST(crc32c_rfc3720)
{
    /* RFC 3720, appendix B.4: CRC32C of 32 bytes of zeros, of ones, of
     * incrementing and of decrementing values, then of an iSCSI PDU. */
    uint8_t buf[32];
    struct {
        const char *what;
        uint32_t expected;
    } vectors[] = {
        { "zeros", 0x8a9136aa },
        { "ones", 0x62a8ab43 },
        { "incrementing", 0x46dd794e },
        { "decrementing", 0x113fdb5c },
    };

    for (size_t v = 0; v < FDP_ARRAY_SIZE(vectors); v++) {
        for (int i = 0; i < 32; i++) {
            buf[i] = v == 0 ? 0 : v == 1 ? 0xff : v == 2 ? i : 31 - i;
        }
        ck_assert_msg(fdp_crc32c(0, buf, 32) == vectors[v].expected,
                      "%s", vectors[v].what);
        for (size_t i = 0; i < fdp__hash_n_impls; i++) {
            const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
            if (fdp__cpu_impl_runs(&impl->cpu)) {
                ck_assert_msg(~impl->funcs.crc32c(~0u, buf, 32)
                              == vectors[v].expected, "%s with impl %s",
                              vectors[v].what, impl->cpu.name);
            }
        }
    }

    /* The fifth example of B.4: a 48-byte iSCSI Read(10) command PDU. */
    static const uint8_t pdu[48] = {
        0x01, 0xc0, 0x00, 0x00, [16] = 0x14, [22] = 0x04, [27] = 0x14,
        [31] = 0x18, [32] = 0x28, [40] = 0x02,
    };
    ck_assert_uint_eq(fdp_crc32c(0, pdu, sizeof pdu), 0xd9963a56);
    for (size_t i = 0; i < fdp__hash_n_impls; i++) {
        const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
        if (fdp__cpu_impl_runs(&impl->cpu)) {
            ck_assert_msg(~impl->funcs.crc32c(~0u, pdu, sizeof pdu)
                          == 0xd9963a56, "iSCSI PDU with impl %s",
                          impl->cpu.name);
        }
    }
}
END_TEST

/* Every implementation equals the bitwise reference for every length
 * 0..1024, at every alignment, from a random register. */
START_TEST(crc32c_every_length)
{
    enum { MAX = 1024 };
    struct unit_rng rng;
    uint8_t *buf = malloc(MAX + 8);

    unit_rng_init(&rng, 1);
    for (size_t i = 0; i < MAX + 8; i++) {
        buf[i] = (uint8_t) unit_rng_next(&rng);
    }
    for (size_t len = 0; len <= MAX; len++) {
        size_t offset = len % 8;
        uint32_t init = (uint32_t) unit_rng_next(&rng);
        uint32_t expected = ref_crc32c_raw(init, buf + offset, len);
        for (size_t i = 0; i < fdp__hash_n_impls; i++) {
            const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
            if (fdp__cpu_impl_runs(&impl->cpu)) {
                uint32_t got = impl->funcs.crc32c(init, buf + offset, len);
                ck_assert_msg(got == expected,
                              "impl %s, length %zu, offset %zu, init %#x: "
                              "%#x != %#x (seed %llu)", impl->cpu.name, len,
                              offset, init, got, expected,
                              (unsigned long long) unit_seed());
            }
        }
    }
    free(buf);
}
END_TEST

/* fdp_hash_crc32c() is fmix32 of the raw CRC of the words' little-endian
 * bytes, for every implementation and word count 0..200 (past the three-
 * lane threshold and the 96-word block). */
START_TEST(hash_crc32c_words)
{
    enum { MAX_WORDS = 200 };
    struct unit_rng rng;
    uint64_t words[MAX_WORDS];
    uint8_t bytes[8 * MAX_WORDS];

    unit_rng_init(&rng, 2);
    for (size_t n = 0; n <= MAX_WORDS; n++) {
        random_words(&rng, words, n);
        words_to_le_bytes(words, n, bytes);
        uint32_t basis = (uint32_t) unit_rng_next(&rng);
        uint32_t expected = fdp__fmix32(ref_crc32c_raw(basis, bytes, 8 * n));
        ck_assert_uint_eq(fdp_hash_crc32c(words, n, basis), expected);
        for (size_t i = 0; i < fdp__hash_n_impls; i++) {
            const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
            if (fdp__cpu_impl_runs(&impl->cpu)) {
                ck_assert_msg(impl->funcs.hash_crc32c(words, n, basis)
                              == expected, "impl %s, %zu words (seed %llu)",
                              impl->cpu.name, n,
                              (unsigned long long) unit_seed());
            }
        }
    }
}
END_TEST

START_TEST(crc32c_shift_constants)
{
    /* fdp__crc32c_shift_k[w] advances a register over w zero words: check
     * x^(64w - 33) against feeding zero words to a register whose only
     * set bit is x^31 (bit 0) and reducing with one more zero word. */
    uint8_t zeros[8 * (2 * FDP_CRC_LANE_MAX + 1)] = { 0 };

    for (size_t w = 1; w <= 2 * FDP_CRC_LANE_MAX; w++) {
        /* Register x^k (reflected: bit 31 - k) times x^(64w) should equal
         * x^(64w - 33) times x^(k + 33). */
        uint32_t one = 0x80000000u;     /* x^0 */
        uint32_t shifted = ref_crc32c_raw(one, zeros, 8 * w);  /* x^(64w) */
        uint32_t k = fdp__crc32c_shift_k[w];
        for (int i = 0; i < 33; i++) {
            k = (k >> 1) ^ ((k & 1) ? 0x82f63b78u : 0);
        }
        ck_assert_msg(k == shifted, "w=%zu", w);
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* jhash2.                                                                 */

START_TEST(jhash2_reference)
{
    /* lookup3.c's published self-test values (driver5). */
    static const char four_score[] = "Four score and seven years ago";
    ck_assert_uint_eq(ref_lookup3(NULL, 0, 0), 0xdeadbeef);
    ck_assert_uint_eq(ref_lookup3(NULL, 0, 0xdeadbeef), 0xbd5b7dde);
    ck_assert_uint_eq(ref_lookup3((const uint8_t *) four_score, 30, 0),
                      0x17770551);
    ck_assert_uint_eq(ref_lookup3((const uint8_t *) four_score, 30, 1),
                      0xcd628161);

    /* fdp_hash_jhash2() is jhash2 over the little-endian 32-bit halves,
     * then fmix32. */
    struct unit_rng rng;
    uint64_t words[40];
    uint8_t bytes[8 * 40];

    unit_rng_init(&rng, 3);
    for (size_t n = 0; n <= 40; n++) {
        random_words(&rng, words, n);
        words_to_le_bytes(words, n, bytes);
        uint32_t basis = (uint32_t) unit_rng_next(&rng);
        ck_assert_msg(fdp_hash_jhash2(words, n, basis)
                      == fdp__fmix32(ref_lookup3(bytes, 8 * n, basis)),
                      "%zu words (seed %llu)", n,
                      (unsigned long long) unit_seed());
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* SipHash.                                                                */

START_TEST(siphash_vectors)
{
    /* SipHash-2-4 reference vectors (Aumasson and Bernstein, vectors.h):
     * key 00 01 .. 0f, message 00 01 .. (len - 1). */
    static const struct {
        size_t len;
        uint64_t expected;
    } vectors[] = {
        { 0, 0x726fdb47dd0e0e31ull },  { 1, 0x74f839c593dc67fdull },
        { 7, 0xab0200f58b01d137ull },  { 8, 0x93f5f5799a932462ull },
        { 15, 0xa129ca6149be45e5ull }, { 16, 0x3f2acc7f57c29bdbull },
        { 63, 0x958a324ceb064572ull },
    };
    struct fdp_hash_key key = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
    uint8_t msg[64];

    for (int i = 0; i < 64; i++) {
        msg[i] = (uint8_t) i;
    }
    for (size_t v = 0; v < FDP_ARRAY_SIZE(vectors); v++) {
        ck_assert_msg(fdp__siphash(2, 4, &key, msg, vectors[v].len)
                      == vectors[v].expected, "length %zu", vectors[v].len);
    }
}
END_TEST

START_TEST(keyed_is_siphash13)
{
    struct unit_rng rng;
    uint64_t words[20];
    uint8_t bytes[8 * 20];

    unit_rng_init(&rng, 4);
    for (size_t n = 0; n <= 20; n++) {
        struct fdp_hash_key key = { unit_rng_next(&rng),
                                    unit_rng_next(&rng) };
        random_words(&rng, words, n);
        words_to_le_bytes(words, n, bytes);
        uint64_t h = fdp__siphash(1, 3, &key, bytes, 8 * n);
        ck_assert_uint_eq(fdp_hash_keyed(words, n, &key),
                          (uint32_t) (h ^ (h >> 32)));
    }
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Properties.                                                             */

typedef uint32_t hash_fn(const uint64_t *, size_t, uint32_t);

static struct fdp_hash_key test_key = { 0x0123456789abcdefull,
                                        0xfedcba9876543210ull };

static uint32_t
keyed_with_basis(const uint64_t *words, size_t n, uint32_t basis)
{
    struct fdp_hash_key key = test_key;

    key.k0 ^= basis;
    return fdp_hash_keyed(words, n, &key);
}

/* Every hash under test: each implementation's CRC32C, jhash2, keyed. */
static size_t
all_hashes(hash_fn *fns[], const char *names[])
{
    size_t n = 0;

    for (size_t i = 0; i < fdp__hash_n_impls; i++) {
        if (fdp__cpu_impl_runs(&fdp__hash_impls[i].cpu)) {
            fns[n] = fdp__hash_impls[i].funcs.hash_crc32c;
            names[n++] = fdp__hash_impls[i].cpu.name;
        }
    }
    fns[n] = fdp_hash_jhash2;
    names[n++] = "jhash2";
    fns[n] = keyed_with_basis;
    names[n++] = "keyed";
    return n;
}

/* Keys that differ only in a few bits must spread over the buckets: for
 * 4096 keys into 256 buckets (16 expected per bucket), Pearson's
 * chi-square over 255 degrees of freedom has mean 255 and standard
 * deviation 22.6; we allow 8 deviations (435) and a fullest bucket of
 * at most 40. */
START_TEST(distribution)
{
    enum { N_KEYS = 4096, N_BUCKETS = 256 };
    /* Bit positions that vary, per shape: the low bits of a word (as in
     * consecutive addresses), a word's high bits, and spread bits. */
    static const struct {
        const char *what;
        size_t word;
        unsigned int shift;
        unsigned int stride;
    } shapes[] = {
        { "low 12 bits of word 0", 0, 0, 1 },
        { "bits 32-43 of word 1", 1, 32, 1 },
        { "bits 52-63 of word 2", 2, 52, 1 },
        { "every 5th bit of word 3", 3, 0, 5 },
    };
    hash_fn *fns[8];
    const char *names[8];
    size_t n_fns = all_hashes(fns, names);

    for (size_t f = 0; f < n_fns; f++) {
        for (size_t s = 0; s < FDP_ARRAY_SIZE(shapes); s++) {
            for (unsigned int window = 0; window <= 24; window += 8) {
                unsigned int counts[N_BUCKETS] = { 0 };
                for (uint32_t i = 0; i < N_KEYS; i++) {
                    uint64_t key[4] = { 0x0a000000c0a80000ull,
                                        0x0000000600000050ull, 0, 0 };
                    uint64_t bits = 0;
                    for (int b = 0; b < 12; b++) {
                        bits |= (uint64_t) ((i >> b) & 1)
                                << (shapes[s].shift + b * shapes[s].stride);
                    }
                    key[shapes[s].word] ^= bits;
                    counts[(fns[f](key, 4, 0x2545f491) >> window)
                           % N_BUCKETS]++;
                }
                double chi2 = 0;
                unsigned int max = 0;
                for (int b = 0; b < N_BUCKETS; b++) {
                    double d = counts[b] - (double) N_KEYS / N_BUCKETS;
                    chi2 += d * d / ((double) N_KEYS / N_BUCKETS);
                    max = counts[b] > max ? counts[b] : max;
                }
                ck_assert_msg(chi2 < 435 && max <= 40,
                              "%s, %s, bits %u..%u: chi2 %.1f, max %u",
                              names[f], shapes[s].what, window, window + 7,
                              chi2, max);
            }
        }
    }
}
END_TEST

/* Builds a difference 'd' of 'n' words with raw CRC32C(0, d) == 0: random
 * words and, last, the raw CRC of the others, which crc32q then cancels
 * (feeding the register's own value as the low half zeroes it). */
static void
make_crc_null_difference(struct unit_rng *rng, uint64_t *d, size_t n)
{
    uint8_t bytes[8 * 16];

    random_words(rng, d, n - 1);
    words_to_le_bytes(d, n - 1, bytes);
    d[n - 1] = ref_crc32c_raw(0, bytes, 8 * (n - 1));
}

START_TEST(crc_collisions_are_seed_independent)
{
    enum { N_WORDS = 4, N_DIFFS = 12, N_KEYS = 1 << N_DIFFS };
    struct unit_rng rng;
    uint64_t diffs[N_DIFFS][N_WORDS];
    uint64_t base[N_WORDS];

    unit_rng_init(&rng, 5);
    random_words(&rng, base, N_WORDS);
    for (int i = 0; i < N_DIFFS; i++) {
        make_crc_null_difference(&rng, diffs[i], N_WORDS);
    }

    /* 4096 distinct keys, all XOR combinations of the differences. */
    static uint64_t keys[N_KEYS][N_WORDS];
    for (uint32_t k = 0; k < N_KEYS; k++) {
        memcpy(keys[k], base, sizeof base);
        for (int i = 0; i < N_DIFFS; i++) {
            if (k & (1u << i)) {
                for (int w = 0; w < N_WORDS; w++) {
                    keys[k][w] ^= diffs[i][w];
                }
            }
        }
    }

    /* Under CRC32C every key has the same hash, whatever the basis and
     * implementation. */
    for (int trial = 0; trial < 4; trial++) {
        uint32_t basis = (uint32_t) unit_rng_next(&rng);
        for (size_t i = 0; i < fdp__hash_n_impls; i++) {
            const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
            if (!fdp__cpu_impl_runs(&impl->cpu)) {
                continue;
            }
            uint32_t h0 = impl->funcs.hash_crc32c(keys[0], N_WORDS, basis);
            for (uint32_t k = 1; k < N_KEYS; k++) {
                ck_assert_uint_eq(impl->funcs.hash_crc32c(keys[k], N_WORDS,
                                                          basis), h0);
            }
        }
    }

    /* Under the keyed hash they spread: at most a handful of 32-bit
     * collisions among 4096 keys (expected 0.002), different under two
     * keys. */
    static uint32_t hashes[2][N_KEYS];
    struct fdp_hash_key key[2];
    for (int j = 0; j < 2; j++) {
        key[j].k0 = unit_rng_next(&rng);
        key[j].k1 = unit_rng_next(&rng);
        for (uint32_t k = 0; k < N_KEYS; k++) {
            hashes[j][k] = fdp_hash_keyed(keys[k], N_WORDS, &key[j]);
        }
    }
    unsigned int same_across_keys = 0;
    for (uint32_t k = 0; k < N_KEYS; k++) {
        same_across_keys += hashes[0][k] == hashes[1][k];
    }
    ck_assert_uint_le(same_across_keys, 2);
    for (int j = 0; j < 2; j++) {
        unsigned int buckets[1024] = { 0 };
        for (uint32_t k = 0; k < N_KEYS; k++) {
            buckets[hashes[j][k] % 1024]++;
        }
        for (int b = 0; b < 1024; b++) {
            /* 4 expected per bucket; P(>= 20) is below 1e-7. */
            ck_assert_uint_lt(buckets[b], 20);
        }
    }
}
END_TEST

START_TEST(fast_hash_dispatch)
{
    uint64_t words[5] = { 1, 2, 3, 4, 5 };
    const char *name = fdp_hash_fast_name();

    if (!strcmp(name, "crc32c")) {
        ck_assert_uint_eq(fdp_hash_fast(words, 5, 7),
                          fdp_hash_crc32c(words, 5, 7));
        ck_assert(fdp_cpu_level() >= FDP_CPU_SSE42);
    } else {
        ck_assert_str_eq(name, "jhash2");
        ck_assert_uint_eq(fdp_hash_fast(words, 5, 7),
                          fdp_hash_jhash2(words, 5, 7));
    }
}
END_TEST

START_TEST(random_seeds)
{
    uint32_t b1, b2;
    struct fdp_hash_key k1, k2;

    ck_assert_int_eq(fdp_hash_random_basis(&b1), 0);
    ck_assert_int_eq(fdp_hash_random_basis(&b2), 0);
    ck_assert_int_eq(fdp_hash_random_key(&k1), 0);
    ck_assert_int_eq(fdp_hash_random_key(&k2), 0);
    /* Equal by chance with probability 2^-32 and 2^-128. */
    ck_assert(b1 != b2);
    ck_assert(k1.k0 != k2.k0 || k1.k1 != k2.k1);
}
END_TEST

/* The numbers of the worked example in lib/hash.c's header comment. */
START_TEST(worked_example)
{
    uint64_t key[2] = { 0x0a000001c0a80001ull, 0x0000000600500050ull };
    struct fdp_hash_key zero = { 0, 0 };
    uint8_t bytes[16];

    words_to_le_bytes(key, 2, bytes);
    ck_assert_uint_eq(ref_crc32c_raw(0x12345678, bytes, 8), 0x15d89406);
    ck_assert_uint_eq(ref_crc32c_raw(0x12345678, bytes, 16), 0x0efb8652);
    ck_assert_uint_eq(fdp_hash_crc32c(key, 2, 0x12345678), 0xcd2bca1b);
    ck_assert_uint_eq(fdp_hash_jhash2(key, 2, 0x12345678), 0x0290a93c);
    ck_assert_uint_eq(fdp_hash_keyed(key, 2, &zero), 0x2f67a10d);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("hash");
    TCase *tc;

    tc = unit_tcase(s, "crc32c");
    tcase_add_test(tc, crc32c_check_value);
    tcase_add_test(tc, crc32c_rfc3720);
    tcase_add_test(tc, crc32c_every_length);
    tcase_add_test(tc, hash_crc32c_words);
    tcase_add_test(tc, crc32c_shift_constants);

    tc = unit_tcase(s, "jhash2");
    tcase_add_test(tc, jhash2_reference);

    tc = unit_tcase(s, "siphash");
    tcase_add_test(tc, siphash_vectors);
    tcase_add_test(tc, keyed_is_siphash13);

    tc = unit_tcase(s, "properties");
    tcase_add_test(tc, distribution);
    tcase_add_test(tc, crc_collisions_are_seed_independent);
    tcase_add_test(tc, fast_hash_dispatch);
    tcase_add_test(tc, random_seeds);
    tcase_add_test(tc, worked_example);

    return unit_run(s);
}
