/*
 * Internal helpers shared by lib/, datapath/ and utilities/.
 */
#ifndef FDP_UTIL_H
#define FDP_UTIL_H 1

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define FDP_ARRAY_SIZE(a) (sizeof (a) / sizeof (a)[0])

/* The struct of type TYPE whose member MEMBER is at POINTER. */
#define CONTAINER_OF(POINTER, TYPE, MEMBER) \
    ((TYPE *) (void *) ((char *) (POINTER) - offsetof(TYPE, MEMBER)))

#if defined(__GNUC__) || defined(__clang__)
#define FDP_LIKELY(x) __builtin_expect(!!(x), 1)
#define FDP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FDP_LIKELY(x) (x)
#define FDP_UNLIKELY(x) (x)
#endif

static inline uint32_t
fdp__rol32(uint32_t x, unsigned int n)
{
    return (x << n) | (x >> ((32 - n) & 31));
}

static inline uint64_t
fdp__rol64(uint64_t x, unsigned int n)
{
    return (x << n) | (x >> ((64 - n) & 63));
}

/* MurmurHash3's 32-bit finaliser: every input bit affects every output bit
 * with probability close to 1/2, so the low bits of the result are good
 * bucket indices even when the input is a linear function of the key (as a
 * raw CRC is). */
static inline uint32_t
fdp__fmix32(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Adds 'n' to a counter that only the calling thread writes and others
 * read: a relaxed load and store, no locked instruction (a reader sees
 * some recent value, never a torn one). */
static inline void
fdp__count_add(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

#endif /* FDP_UTIL_H */
