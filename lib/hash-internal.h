/*
 * Internal hashing interface for the tables in lib/.
 */
#ifndef FDP_HASH_INTERNAL_H
#define FDP_HASH_INTERNAL_H 1

#include <flowdp/hash.h>

/* CRC32C polynomial, bit-reflected (Castagnoli 1993; RFC 3720, B.4). */
#define FDP_CRC32C_POLY 0x82f63b78u

#endif /* FDP_HASH_INTERNAL_H */
