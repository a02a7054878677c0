/*
 * flowdp: flow hashing.
 *
 * Flow keys are arrays of 64-bit words (see key.h); tables hash the words a
 * mask touches, with a per-table random basis.  Three hashes share one
 * shape, each producing a 32-bit value whose low bits are good bucket
 * indices:
 *
 *   - CRC32C, computed with the SSE4.2 CRC32 instruction (three interleaved
 *     lanes for long keys) and a portable table-driven fallback that gives
 *     the same value, followed by a finalising mix;
 *   - jhash2, the Linux kernel's word hash (Bob Jenkins' lookup3 hashword),
 *     followed by the same mix;
 *   - a keyed strong hash, SipHash-1-3 with a 128-bit per-table key.
 *
 * fdp_hash_fast() is CRC32C where the CPU has the CRC32 instruction (and
 * FLOWDP_CPU allows it), jhash2 elsewhere: a software CRC is slower than
 * jhash2.  CRC is affine over GF(2), so keys that collide under CRC32C
 * collide under every basis; a table under a hash-flooding attack switches
 * to fdp_hash_keyed(), whose collisions an attacker cannot predict without
 * the key.
 *
 * Thread-safety: every function may be called concurrently from any thread.
 * The hash functions are pure; results are only meaningful within one
 * process (fdp_hash_fast() depends on the CPU level).
 */
#ifndef FLOWDP_HASH_H
#define FLOWDP_HASH_H 1

#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A key for fdp_hash_keyed(): 128 bits, secret, random per table. */
struct fdp_hash_key {
    uint64_t k0;
    uint64_t k1;
};

/* Standard CRC-32C (Castagnoli, as in iSCSI, RFC 3720): reflected
 * polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF, so that
 * fdp_crc32c(0, "123456789", 9) == 0xE3069283.  To extend a CRC, pass the
 * previous result as 'crc'.  'data' may be NULL if 'size' is 0. */
FDP_API uint32_t fdp_crc32c(uint32_t crc, const void *data, size_t size);

/* CRC32C of the 'n_words' words (each word's bytes in little-endian order,
 * as the crc32q instruction reads them) with the CRC register starting at
 * 'basis', then mixed.  The same value on every CPU level. */
FDP_API uint32_t fdp_hash_crc32c(const uint64_t *words, size_t n_words,
                                 uint32_t basis);

/* jhash2 over the words as 2 * 'n_words' 32-bit words (low half first)
 * with 'basis' as initval, then mixed. */
FDP_API uint32_t fdp_hash_jhash2(const uint64_t *words, size_t n_words,
                                 uint32_t basis);

/* SipHash-1-3 of the words under 'key', folded to 32 bits. */
FDP_API uint32_t fdp_hash_keyed(const uint64_t *words, size_t n_words,
                                const struct fdp_hash_key *key);

/* The fast flow hash for this process: fdp_hash_crc32c() where the CRC32
 * instruction is in use, otherwise fdp_hash_jhash2(). */
FDP_API uint32_t fdp_hash_fast(const uint64_t *words, size_t n_words,
                               uint32_t basis);

/* "crc32c" or "jhash2": which hash fdp_hash_fast() computes. */
FDP_API const char *fdp_hash_fast_name(void);

/* Fill a basis or a key from OpenSSL's RAND_bytes().  Return 0, or EIO if
 * the random generator failed (nothing is written then). */
FDP_API int fdp_hash_random_basis(uint32_t *basis);
FDP_API int fdp_hash_random_key(struct fdp_hash_key *key);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_HASH_H */
