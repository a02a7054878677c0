/*
 * The packet parser's entry points for the datapath (datapath/extract.c).
 */
#ifndef FDP_EXTRACT_INTERNAL_H
#define FDP_EXTRACT_INTERNAL_H 1

#include <stddef.h>
#include <stdint.h>

#include <flowdp/datapath.h>
#include <flowdp/key.h>

/* Extracts exactly as fdp_packet_extract() does ('layout' may be NULL) and
 * returns fdp_hash_fast(key->w, FDP_KEY_PACKET_WORDS, basis), computed as the key
 * words are finalised where the CPU level runs CRC32C in hardware (one
 * pass, no second call), else by calling fdp_hash_fast().
 *
 * Thread-safety: pure; any thread. */
uint32_t fdp__packet_extract_hash(const void *data, size_t size,
                                  uint32_t in_port, uint32_t basis,
                                  struct fdp_key *key,
                                  struct fdp_packet_layout *layout);

/* The same with SSE4.2 (datapath/extract-sse42.c): only for when
 * fdp_hash_fast() is fdp__hash_crc32c_sse42(). */
uint32_t fdp__packet_extract_hash_sse42(const void *data, size_t size,
                                        uint32_t in_port, uint32_t basis,
                                        struct fdp_key *key,
                                        struct fdp_packet_layout *layout);

#endif /* FDP_EXTRACT_INTERNAL_H */
