/*
 * Flow hashing: CRC32C, jhash2, SipHash-1-3, and their run-time dispatch.
 *
 * What it is for
 * ==============
 * Every tuple-space subtable hashes the words of a flow key that its mask
 * touches and uses the low bits of the result as a bucket index.  The hash
 * runs once per subtable visited per packet, so it must be fast on short
 * keys (a 5-tuple mask touches three or four words), and it must spread
 * structured keys (addresses that differ in their last bits) evenly.
 *
 * Design
 * ======
 * 1. CRC32C with the SSE4.2 crc32q instruction eats 8 bytes per instruction
 *    at a latency of 3 cycles and a throughput of 1 per cycle.  Keys of at
 *    least 3 * FDP_CRC_LANE_MIN words are split into three lanes computed
 *    side by side and joined with two carry-less multiplications
 *    (lib/hash-sse42.c explains the algebra).  The portable fallback,
 *    fdp__crc32c_sw(), is slicing-by-8 and gives the same value.
 *
 * 2. A raw CRC is a linear map of the key: its low bits are XORs of fixed
 *    key bits, so keys that differ only in some bits can land in only a few
 *    buckets.  Every flow hash therefore ends with fdp__fmix32(), whose
 *    multiplications make each output bit depend on every input bit.
 *
 * 3. Where the CPU lacks the CRC32 instruction, the fast hash is jhash2
 *    (lookup3's hashword, as the Linux kernel's jhash2) over the key as
 *    32-bit words: a software CRC costs more than jhash2's 36 operations
 *    per 12 bytes.
 *
 * 4. CRC is affine over GF(2): crc(b, x ^ y) = crc(b, x) ^ crc(0, y), so if
 *    crc(0, d) == 0 then x and x ^ d collide under every basis and every
 *    finaliser.  Such d are easy to build (append the raw CRC of a prefix as
 *    a final word), so an attacker who picks addresses and ports can make
 *    any number of keys with one hash value.  fdp_hash_keyed() is
 *    SipHash-1-3 under a random 128-bit key: a pseudo-random function whose
 *    collisions cannot be found without the key.  Tables keep the fast hash
 *    and rehash with the keyed one when a probe grows past its bound.
 *
 * Dispatch
 * ========
 * fdp__hash_impls[] has one row per instruction-set level, best first, each
 * with a probe of the CPU and a table of functions.  The first row the CPU
 * supports and FLOWDP_CPU allows is chosen once, on the first call, by
 * fdp__cpu_select() (lib/cpu-internal.h), as in every dispatched module; the
 * public functions jump through pointers that start at a resolver and are
 * replaced by the chosen functions (the pattern of an ifunc).  Tests and the
 * benchmark walk the table to run every row on the same inputs.
 *
 * Invariants
 * ==========
 * - fdp_hash_crc32c() gives the same value on every level and every
 *   endianness: words are read by value, low byte first.
 * - fdp_crc32c() is the standard CRC-32C; the raw register functions
 *   (no inversions) are what the flow hash is built from.
 *
 * Thread-safety: all functions are pure or idempotent; selection uses
 * pthread_once and atomic pointer stores, so any thread may call any
 * function at any time.
 *
 * Worked example
 * ==============
 * The key {0x0a000001c0a80001, 0x0000000600500050} (nw_src 192.168.0.1,
 * nw_dst 10.0.0.1; tp_src 80, tp_dst 80, nw_proto 6) with basis
 * 0x12345678:
 *   raw CRC32C register after word 0:   0x15d89406
 *   raw CRC32C register after word 1:   0x0efb8652
 *   fdp_hash_crc32c() = fmix32 of that: 0xcd2bca1b
 *   fdp_hash_jhash2():                  0x0290a93c
 * and SipHash-1-3 under the key {0, 0} gives 0x2f67a10d (folded).  The unit
 * test "worked_example" checks these numbers.
 *
 * References
 * ==========
 * - G. Castagnoli, S. Braeuer, M. Herrmann, "Optimization of cyclic
 *   redundancy-check codes with 24 and 32 parity bits", IEEE Trans. Comm.,
 *   1993; RFC 3720 appendix B.4 (CRC32C test vectors).
 * - Intel, "Fast CRC Computation for iSCSI Polynomial Using CRC32
 *   Instruction", 2011 (three-lane interleaving).
 * - B. Jenkins, lookup3.c, 2006; Linux include/linux/jhash.h.
 * - J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast short-input PRF",
 *   INDOCRYPT 2012.
 */
#include <config.h>

#include "lib/hash-private.h"

#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

#include <openssl/rand.h>

#include "lib/util.h"

/* ---------------------------------------------------------------------- */
/* Tables computed when the library loads.                                 */

/* Slicing-by-8 tables: crc_table[k][b] is the register after feeding byte
 * b followed by k zero bytes into a zero register. */
static uint32_t crc_table[8][256];

uint32_t fdp__crc32c_shift_k[2 * FDP_CRC_LANE_MAX + 1];

/* Multiplies a bit-reflected polynomial by x modulo the CRC32C polynomial. */
static uint32_t
crc_mulx(uint32_t v)
{
    return (v >> 1) ^ ((v & 1) ? FDP_CRC32C_POLY : 0);
}

__attribute__((constructor)) static void
hash_tables_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;
        for (int i = 0; i < 8; i++) {
            crc = crc_mulx(crc);
        }
        crc_table[0][b] = crc;
    }
    for (int k = 1; k < 8; k++) {
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t prev = crc_table[k - 1][b];
            crc_table[k][b] = (prev >> 8) ^ crc_table[0][prev & 0xff];
        }
    }

    /* x^0 is bit 31 in the reflected representation. */
    uint32_t xpow = 0x80000000u;
    unsigned int exp = 0;
    for (unsigned int w = 1; w < FDP_ARRAY_SIZE(fdp__crc32c_shift_k); w++) {
        for (; exp < 64 * w - 33; exp++) {
            xpow = crc_mulx(xpow);
        }
        fdp__crc32c_shift_k[w] = xpow;
    }
}

/* ---------------------------------------------------------------------- */
/* CRC32C in software.                                                     */

static uint32_t
crc_sw_word(uint32_t crc, uint64_t word)
{
    uint64_t x = word ^ crc;

    return crc_table[7][x & 0xff] ^ crc_table[6][(x >> 8) & 0xff]
           ^ crc_table[5][(x >> 16) & 0xff] ^ crc_table[4][(x >> 24) & 0xff]
           ^ crc_table[3][(x >> 32) & 0xff] ^ crc_table[2][(x >> 40) & 0xff]
           ^ crc_table[1][(x >> 48) & 0xff] ^ crc_table[0][x >> 56];
}

static uint64_t
load_le64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

uint32_t
fdp__crc32c_sw(uint32_t crc, const void *data, size_t size)
{
    const uint8_t *p = data;

    for (; size >= 8; p += 8, size -= 8) {
        crc = crc_sw_word(crc, load_le64(p));
    }
    for (; size; p++, size--) {
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p) & 0xff];
    }
    return crc;
}

uint32_t
fdp__hash_crc32c_sw(const uint64_t *words, size_t n_words, uint32_t basis)
{
    uint32_t crc = basis;

    for (size_t i = 0; i < n_words; i++) {
        crc = crc_sw_word(crc, words[i]);
    }
    return fdp__fmix32(crc);
}

size_t
fdp__crc32c_null_space(size_t n_words, const uint64_t *controlled,
                       uint64_t (*diffs)[16], size_t max)
{
    /* Gaussian elimination over GF(2): each controlled bit b contributes
     * the column crc(0, e_b); rows of the augmented matrix [crc | bits]
     * that reduce to crc 0 are differences with zero CRC. */
    struct row {
        uint32_t crc;
        uint64_t bits[16];
    };
    size_t n_rows = 0;
    struct row *rows = malloc(16 * 64 * sizeof *rows);
    size_t n_found = 0;

    if (!rows || n_words > 16) {
        free(rows);
        return 0;
    }
    for (size_t w = 0; w < n_words; w++) {
        for (int b = 0; b < 64; b++) {
            if (!((controlled[w] >> b) & 1)) {
                continue;
            }
            struct row *r = &rows[n_rows++];
            memset(r->bits, 0, sizeof r->bits);
            r->bits[w] = UINT64_C(1) << b;
            r->crc = fdp__crc32c_sw(0, NULL, 0);
            for (size_t i = 0; i < n_words; i++) {
                r->crc = crc_sw_word(r->crc, r->bits[i]);
            }
        }
    }
    /* Reduce: for each CRC bit, pick a pivot row and clear that bit from
     * every later row. */
    size_t pivot = 0;
    for (int bit = 31; bit >= 0 && pivot < n_rows; bit--) {
        size_t p = pivot;
        while (p < n_rows && !((rows[p].crc >> bit) & 1)) {
            p++;
        }
        if (p == n_rows) {
            continue;
        }
        struct row tmp = rows[p];
        rows[p] = rows[pivot];
        rows[pivot] = tmp;
        for (size_t i = pivot + 1; i < n_rows; i++) {
            if ((rows[i].crc >> bit) & 1) {
                rows[i].crc ^= rows[pivot].crc;
                for (size_t w = 0; w < n_words; w++) {
                    rows[i].bits[w] ^= rows[pivot].bits[w];
                }
            }
        }
        pivot++;
    }
    for (size_t i = pivot; i < n_rows && n_found < max; i++) {
        if (!rows[i].crc) {
            memcpy(diffs[n_found++], rows[i].bits, sizeof rows[i].bits);
        }
    }
    free(rows);
    return n_found;
}

/* ---------------------------------------------------------------------- */
/* jhash2.                                                                 */

/* jhash2 over 64-bit words: fdp__jhash2_words() (lib/hash-private.h), which
 * the tuple-space subtables inline with a constant word count. */
uint32_t
fdp_hash_jhash2(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return fdp__jhash2_words(words, n_words, basis);
}

/* ---------------------------------------------------------------------- */
/* SipHash.                                                                */

/* The SipHash primitives are inline in lib/hash-private.h. */

uint64_t
fdp__siphash(unsigned int c_rounds, unsigned int d_rounds,
             const struct fdp_hash_key *key, const void *data, size_t size)
{
    const uint8_t *p = data;
    struct fdp__sip_state s;
    uint64_t last = (uint64_t) size << 56;

    fdp__sip_init(&s, key);
    for (; size >= 8; p += 8, size -= 8) {
        fdp__sip_block(&s, c_rounds, load_le64(p));
    }
    for (size_t i = 0; i < size; i++) {
        last |= (uint64_t) p[i] << (8 * i);
    }
    fdp__sip_block(&s, c_rounds, last);
    return fdp__sip_finish(&s, d_rounds);
}

uint32_t
fdp_hash_keyed(const uint64_t *words, size_t n_words,
               const struct fdp_hash_key *key)
{
    return fdp__keyed_words(words, n_words, key);
}

/* ---------------------------------------------------------------------- */
/* Dispatch.                                                               */

/* Best first, generic last (lib/cpu-internal.h). */
const struct fdp__hash_impl fdp__hash_impls[] = {
#ifdef FDP_HAVE_SSE42
    { { "sse42", FDP_CPU_SSE42, NULL },
      { fdp__crc32c_sse42, fdp__hash_crc32c_sse42, fdp__hash_crc32c_sse42,
        "crc32c" } },
#endif
    { { "generic", FDP_CPU_GENERIC, NULL },
      { fdp__crc32c_sw, fdp__hash_crc32c_sw, fdp_hash_jhash2, "jhash2" } },
};
const size_t fdp__hash_n_impls = FDP_ARRAY_SIZE(fdp__hash_impls);

static pthread_once_t select_once = PTHREAD_ONCE_INIT;
static const struct fdp__hash_impl *selected;

static uint32_t resolve_crc32c(uint32_t, const void *, size_t);
static uint32_t resolve_hash_crc32c(const uint64_t *, size_t, uint32_t);
static uint32_t resolve_hash_fast(const uint64_t *, size_t, uint32_t);

/* Jump pointers: each starts at its resolver, which selects the
 * implementation and replaces the pointer, so that later calls cost one
 * indirect call.  fdp__hash_fast_fn is not static: the packet parser reads
 * it (lib/hash-private.h). */
static uint32_t (*crc32c_fn)(uint32_t, const void *, size_t) = resolve_crc32c;
static uint32_t (*hash_crc32c_fn)(const uint64_t *, size_t, uint32_t)
    = resolve_hash_crc32c;
uint32_t (*fdp__hash_fast_fn)(const uint64_t *, size_t, uint32_t)
    = resolve_hash_fast;

static void
select_impl(void)
{
    selected = &fdp__hash_impls[FDP__CPU_SELECT(fdp__hash_impls,
                                                fdp__hash_n_impls)];
    __atomic_store_n(&crc32c_fn, selected->funcs.crc32c, __ATOMIC_RELEASE);
    __atomic_store_n(&hash_crc32c_fn, selected->funcs.hash_crc32c,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&fdp__hash_fast_fn, selected->funcs.hash_fast,
                     __ATOMIC_RELEASE);
}

const struct fdp__hash_impl *
fdp__hash_selected(void)
{
    pthread_once(&select_once, select_impl);
    return selected;
}

static uint32_t
resolve_crc32c(uint32_t crc, const void *data, size_t size)
{
    return fdp__hash_selected()->funcs.crc32c(crc, data, size);
}

static uint32_t
resolve_hash_crc32c(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return fdp__hash_selected()->funcs.hash_crc32c(words, n_words, basis);
}

static uint32_t
resolve_hash_fast(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return fdp__hash_selected()->funcs.hash_fast(words, n_words, basis);
}

/* ---------------------------------------------------------------------- */
/* Public functions.                                                       */

uint32_t
fdp_crc32c(uint32_t crc, const void *data, size_t size)
{
    return ~__atomic_load_n(&crc32c_fn, __ATOMIC_ACQUIRE)(~crc, data, size);
}

uint32_t
fdp_hash_crc32c(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return __atomic_load_n(&hash_crc32c_fn, __ATOMIC_ACQUIRE)(words, n_words,
                                                              basis);
}

uint32_t
fdp_hash_fast(const uint64_t *words, size_t n_words, uint32_t basis)
{
    return __atomic_load_n(&fdp__hash_fast_fn, __ATOMIC_ACQUIRE)(words,
                                                                 n_words,
                                                                 basis);
}

static const char *fast_name_override;

const char *
fdp_hash_fast_name(void)
{
    const char *name = __atomic_load_n(&fast_name_override, __ATOMIC_ACQUIRE);

    return name ? name : fdp__hash_selected()->funcs.fast_name;
}

int
fdp__hash_set_fast(const char *name)
{
    fdp__hash_selected();
    for (size_t i = 0; i < fdp__hash_n_impls; i++) {
        const struct fdp__hash_impl *impl = &fdp__hash_impls[i];
        if (!strcmp(name, "crc32c") && !strcmp(impl->funcs.fast_name, name)) {
            if (!fdp__cpu_impl_runs(&impl->cpu)) {
                return ENOTSUP;
            }
            __atomic_store_n(&fdp__hash_fast_fn, impl->funcs.hash_fast,
                             __ATOMIC_RELEASE);
            __atomic_store_n(&fast_name_override, "crc32c", __ATOMIC_RELEASE);
            return 0;
        }
    }
    if (!strcmp(name, "jhash2")) {
        __atomic_store_n(&fdp__hash_fast_fn, fdp_hash_jhash2,
                         __ATOMIC_RELEASE);
        __atomic_store_n(&fast_name_override, "jhash2", __ATOMIC_RELEASE);
        return 0;
    }
    return strcmp(name, "crc32c") ? EINVAL : ENOTSUP;
}

int
fdp_hash_random_basis(uint32_t *basis)
{
    uint32_t b;

    if (RAND_bytes((unsigned char *) &b, sizeof b) != 1) {
        return EIO;
    }
    *basis = b;
    return 0;
}

int
fdp_hash_random_key(struct fdp_hash_key *key)
{
    uint64_t k[2];

    if (RAND_bytes((unsigned char *) k, sizeof k) != 1) {
        return EIO;
    }
    key->k0 = k[0];
    key->k1 = k[1];
    return 0;
}
