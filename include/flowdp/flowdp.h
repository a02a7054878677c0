/*
 * flowdp: the whole public API.
 */
#ifndef FLOWDP_FLOWDP_H
#define FLOWDP_FLOWDP_H 1

#include <flowdp/common.h>
#include <flowdp/cpu.h>
#include <flowdp/hash.h>

#endif /* FLOWDP_FLOWDP_H */
