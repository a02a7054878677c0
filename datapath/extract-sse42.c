/*
 * fdp__packet_extract_hash() with the CRC32C flow hash in line.
 *
 * This file alone (of datapath/) is compiled with -msse4.2; extract.c
 * calls it only when fdp_hash_fast() is the SSE4.2 CRC32C, which the hash
 * dispatch (lib/hash.c) chooses only where CPUID has it.
 *
 * The body is datapath/extract-impl.h, the same as the portable entry
 * points'.  fdp__hash_crc32c_sse42() splits a 12-word key into three lanes
 * joined with carry-less multiplications; a single crc32q chain over the
 * same words gives the same register (the lanes are an evaluation order of
 * the same polynomial arithmetic), and here each crc32q starts as soon as
 * its word is built, overlapping the parse of later layers, where a call
 * after the parse would wait for all of it and reload the words from
 * memory.  The unit test checks it against fdp_hash_fast() on every
 * packet it makes.
 */
#include <config.h>

#include <nmmintrin.h>

#include "datapath/extract-impl.h"
#include "datapath/extract-internal.h"
#include "lib/util.h"

uint32_t
fdp__packet_extract_hash_sse42(const void *data, size_t size,
                               uint32_t in_port, uint32_t basis,
                               struct fdp_key *key,
                               struct fdp_packet_layout *layout)
{
    struct fdp_packet_layout l;
    uint64_t w[FDP_KEY_WORDS];
    uint64_t crc = basis;

    fdp__extract_words(data, size, in_port, w, &l);
    for (int i = 0; i < FDP_KEY_WORDS; i++) {
        key->w[i] = w[i];
        crc = _mm_crc32_u64(crc, w[i]);
    }
    if (layout) {
        *layout = l;
    }
    return fdp__fmix32((uint32_t) crc);
}
