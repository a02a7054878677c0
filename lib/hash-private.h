/*
 * Hash implementations, shared with their SIMD files, the unit tests and
 * flowdp-bench so that each can be run and compared directly.
 */
#ifndef FDP_HASH_PRIVATE_H
#define FDP_HASH_PRIVATE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/cpu-internal.h"
#include "lib/hash-internal.h"
#include "lib/util.h"

/* The functions one implementation provides. */
struct fdp__hash_funcs {
    /* Raw CRC32C register update: no initial or final inversion. */
    uint32_t (*crc32c)(uint32_t crc, const void *data, size_t size);
    /* fdp_hash_crc32c() */
    uint32_t (*hash_crc32c)(const uint64_t *words, size_t n_words,
                            uint32_t basis);
    /* fdp_hash_fast() and its name. */
    uint32_t (*hash_fast)(const uint64_t *words, size_t n_words,
                          uint32_t basis);
    const char *fast_name;
};

/* One row of the dispatch table: {name, level, probe} and the functions,
 * chosen by fdp__cpu_select() (lib/cpu-internal.h).  Rows run from the
 * best level down to generic, which is always last and always usable. */
struct fdp__hash_impl {
    struct fdp__cpu_impl cpu;
    struct fdp__hash_funcs funcs;
};

extern const struct fdp__hash_impl fdp__hash_impls[];
extern const size_t fdp__hash_n_impls;

/* What fdp_hash_fast() calls: a resolver until the first call selects the
 * implementation, then the row's hash_fast (or what fdp__hash_set_fast()
 * chose).  The packet parser (datapath/extract.c) reads it to tell whether
 * the fast hash is the hardware CRC32C it can compute in line. */
extern uint32_t (*fdp__hash_fast_fn)(const uint64_t *words, size_t n_words,
                                     uint32_t basis);

/* The row chosen for this process. */
const struct fdp__hash_impl *fdp__hash_selected(void);

/* For benchmarks only: makes fdp_hash_fast() compute "crc32c" or
 * "jhash2" from now on.  Tables hash with fdp_hash_fast() on every probe,
 * so call it only while no table exists.  Returns 0, or ENOTSUP if this
 * CPU or build cannot run the named hash in hardware (crc32c), EINVAL for
 * an unknown name. */
int fdp__hash_set_fast(const char *name);

/* Portable implementations (lib/hash.c). */
uint32_t fdp__crc32c_sw(uint32_t crc, const void *data, size_t size);
uint32_t fdp__hash_crc32c_sw(const uint64_t *words, size_t n_words,
                             uint32_t basis);
uint64_t fdp__siphash(unsigned int c_rounds, unsigned int d_rounds,
                      const struct fdp_hash_key *key,
                      const void *data, size_t size);

/* Hash flooding, for tests and benchmarks: stores in 'diffs' up to
 * 'max' linearly independent differences d (each 'n_words' words, at
 * most 16) that only flip bits set in 'controlled' and have raw
 * CRC32C(0, d) == 0.  XORing any combination of them into a key leaves
 * fdp_hash_crc32c() unchanged under every basis.  Returns how many. */
size_t fdp__crc32c_null_space(size_t n_words, const uint64_t *controlled,
                              uint64_t (*diffs)[16], size_t max);

/* SSE4.2 + CLMUL implementations (lib/hash-sse42.c). */
uint32_t fdp__crc32c_sse42(uint32_t crc, const void *data, size_t size);
uint32_t fdp__hash_crc32c_sse42(const uint64_t *words, size_t n_words,
                                uint32_t basis);

/* Lane lengths of the interleaved CRC (lib/hash-sse42.c).  Inputs of at
 * least 3 * FDP_CRC_LANE_MIN words are split into three lanes computed in
 * parallel; longer inputs go in blocks of three lanes of at most
 * FDP_CRC_LANE_MAX words. */
#define FDP_CRC_LANE_MIN 3
#define FDP_CRC_LANE_MAX 32

/* fdp__crc32c_shift_k[w] = x^(64w - 33) mod P, bit-reflected, for
 * 1 <= w <= 2 * FDP_CRC_LANE_MAX: multiplying a CRC register by it with
 * PCLMULQDQ and reducing with crc32q advances the register over w zero
 * words.  Filled when the library loads. */
extern uint32_t fdp__crc32c_shift_k[2 * FDP_CRC_LANE_MAX + 1];

/* ---------------------------------------------------------------------- */
/* jhash2, inline so that callers with a constant word count (the
 * tuple-space subtables, lib/tss.c) get it unrolled. */

/* lookup3's starting constant: an arbitrary value, the same as the
 * kernel's FDP_JHASH_INITVAL. */
#define FDP_JHASH_INITVAL 0xdeadbeefu

/* lookup3's mix() and final(): the rotation counts were chosen by Jenkins
 * for avalanche; see lookup3.c. */
#define FDP_JHASH_MIX(a, b, c)                              \
    do {                                                \
        a -= c; a ^= fdp__rol32(c, 4);  c += b;         \
        b -= a; b ^= fdp__rol32(a, 6);  a += c;         \
        c -= b; c ^= fdp__rol32(b, 8);  b += a;         \
        a -= c; a ^= fdp__rol32(c, 16); c += b;         \
        b -= a; b ^= fdp__rol32(a, 19); a += c;         \
        c -= b; c ^= fdp__rol32(b, 4);  b += a;         \
    } while (0)

#define FDP_JHASH_FINAL(a, b, c)                            \
    do {                                                \
        c ^= b; c -= fdp__rol32(b, 14);                 \
        a ^= c; a -= fdp__rol32(c, 11);                 \
        b ^= a; b -= fdp__rol32(a, 25);                 \
        c ^= b; c -= fdp__rol32(b, 16);                 \
        a ^= c; a -= fdp__rol32(c, 4);                  \
        b ^= a; b -= fdp__rol32(a, 14);                 \
        c ^= b; c -= fdp__rol32(b, 24);                 \
    } while (0)

/* Loads the 32-bit word at 'p' in little-endian byte order. */
static inline uint32_t
fdp__load_le32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* jhash2 over 64-bit words, reading each as its low then its high half so
 * that the value does not depend on byte order: the Linux kernel's
 * jhash2(k, 2 * n_words, basis) over those halves, then mixed.  On a
 * little-endian machine the halves are simply the words' memory read as
 * 32-bit words (with memcpy, which keeps strict aliasing). */
static inline __attribute__((always_inline)) uint32_t
fdp__jhash2_words(const uint64_t *words, size_t n_words, uint32_t basis)
{
    const uint8_t *k = (const uint8_t *) words;
    size_t length = 2 * n_words;        /* In 32-bit words. */
    uint32_t a, b, c;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HALF(i) ((uint32_t) (words[(i) / 2] >> (((i) & 1) * 32)))
#else
#define HALF(i) fdp__load_le32(k + 4 * (i))
#endif
    a = b = c = FDP_JHASH_INITVAL + ((uint32_t) length << 2) + basis;
    size_t i = 0;
    for (; length - i > 3; i += 3) {
        a += HALF(i);
        b += HALF(i + 1);
        c += HALF(i + 2);
        FDP_JHASH_MIX(a, b, c);
    }
    switch (length - i) {
    case 3:
        c += HALF(i + 2);
        /* fall through */
    case 2:
        b += HALF(i + 1);
        /* fall through */
    case 1:
        a += HALF(i);
        FDP_JHASH_FINAL(a, b, c);
        break;
    default:
        break;
    }
#undef HALF
    return fdp__fmix32(c);
}

/* ---------------------------------------------------------------------- */
/* SipHash, inline for the same reason.                                    */

#define FDP_SIPROUND(v0, v1, v2, v3)                                    \
    do {                                                                \
        v0 += v1; v1 = fdp__rol64(v1, 13); v1 ^= v0;                    \
        v0 = fdp__rol64(v0, 32);                                        \
        v2 += v3; v3 = fdp__rol64(v3, 16); v3 ^= v2;                    \
        v0 += v3; v3 = fdp__rol64(v3, 21); v3 ^= v0;                    \
        v2 += v1; v1 = fdp__rol64(v1, 17); v1 ^= v2;                    \
        v2 = fdp__rol64(v2, 32);                                        \
    } while (0)

/* SipHash's initial state: "somepseudorandomlygeneratedbytes" in ASCII. */
#define FDP_SIP_INIT0 0x736f6d6570736575ull
#define FDP_SIP_INIT1 0x646f72616e646f6dull
#define FDP_SIP_INIT2 0x6c7967656e657261ull
#define FDP_SIP_INIT3 0x7465646279746573ull

struct fdp__sip_state {
    uint64_t v0, v1, v2, v3;
};

static inline void
fdp__sip_init(struct fdp__sip_state *s, const struct fdp_hash_key *key)
{
    s->v0 = FDP_SIP_INIT0 ^ key->k0;
    s->v1 = FDP_SIP_INIT1 ^ key->k1;
    s->v2 = FDP_SIP_INIT2 ^ key->k0;
    s->v3 = FDP_SIP_INIT3 ^ key->k1;
}

static inline void
fdp__sip_block(struct fdp__sip_state *s, unsigned int c_rounds, uint64_t m)
{
    s->v3 ^= m;
    for (unsigned int i = 0; i < c_rounds; i++) {
        FDP_SIPROUND(s->v0, s->v1, s->v2, s->v3);
    }
    s->v0 ^= m;
}

static inline uint64_t
fdp__sip_finish(struct fdp__sip_state *s, unsigned int d_rounds)
{
    s->v2 ^= 0xff;
    for (unsigned int i = 0; i < d_rounds; i++) {
        FDP_SIPROUND(s->v0, s->v1, s->v2, s->v3);
    }
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* fdp_hash_keyed(). */
static inline __attribute__((always_inline)) uint32_t
fdp__keyed_words(const uint64_t *words, size_t n_words,
                 const struct fdp_hash_key *key)
{
    struct fdp__sip_state s;

    /* The same value as fdp__siphash(1, 3, key, bytes, 8 * n_words) over
     * the words' little-endian bytes; reading words directly saves the
     * byte loop.  The length byte wraps at 256 bytes, as SipHash's does. */
    fdp__sip_init(&s, key);
    for (size_t i = 0; i < n_words; i++) {
        fdp__sip_block(&s, 1, words[i]);
    }
    fdp__sip_block(&s, 1, (uint64_t) (8 * n_words) << 56);
    uint64_t h = fdp__sip_finish(&s, 3);
    return (uint32_t) (h ^ (h >> 32));
}

#endif /* FDP_HASH_PRIVATE_H */

