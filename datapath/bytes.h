/*
 * Big-endian loads and stores at any alignment, for code that edits
 * packets in place (datapath/execute.c, datapath/port-offload.c).  Byte by
 * byte, so that they are correct on any host and at any offset; the
 * compiler turns each into one load or store and a byte swap.
 */
#ifndef FDP_DATAPATH_BYTES_H
#define FDP_DATAPATH_BYTES_H 1

#include <stdint.h>

static inline uint16_t
fdp__get16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

static inline void
fdp__put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static inline uint32_t
fdp__get32(const uint8_t *p)
{
    return (uint32_t) fdp__get16(p) << 16 | fdp__get16(p + 2);
}

static inline void
fdp__put32(uint8_t *p, uint32_t v)
{
    fdp__put16(p, (uint16_t) (v >> 16));
    fdp__put16(p + 2, (uint16_t) v);
}

#endif /* FDP_DATAPATH_BYTES_H */
