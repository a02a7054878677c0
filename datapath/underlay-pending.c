/*
 * TEMPORARY: weak stand-ins for the underlay's resolver until
 * datapath/underlay.c lands in main (then this file goes).  Weak, so that
 * the real definitions win if both are linked: with these alone there is
 * no route to anywhere and no local address, so tunnel ports drop what
 * they would send (counted as no_route) and take nothing in.
 */
#include <config.h>

#include "datapath/underlay-pending.h"

#include <errno.h>

__attribute__((weak)) int
fdp__underlay_resolve(struct fdp_dp *dp, const struct in6_addr *dst,
                      const struct in6_addr *src, struct fdp__nexthop *nh)
{
    (void) dp;
    (void) dst;
    (void) src;
    (void) nh;
    return EHOSTUNREACH;
}

__attribute__((weak)) uint64_t
fdp__underlay_version(const struct fdp_dp *dp)
{
    (void) dp;
    return 0;
}

__attribute__((weak)) bool
fdp__underlay_is_local(const struct fdp_dp *dp, const struct in6_addr *addr)
{
    (void) dp;
    (void) addr;
    return false;
}
