/*
 * TEMPORARY: the underlay's resolver API (datapath/underlay.h, helper
 * "underlay"), declared here until that header lands in main; this file
 * and datapath/underlay-pending.c go at that merge.
 */
#ifndef FDP_UNDERLAY_PENDING_H
#define FDP_UNDERLAY_PENDING_H 1

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

struct fdp_dp;

struct fdp__nexthop {
    uint32_t port_no;
    struct in6_addr src;
    uint64_t src_mac, dst_mac;
};

int fdp__underlay_resolve(struct fdp_dp *, const struct in6_addr *dst,
                          const struct in6_addr *src_or_null,
                          struct fdp__nexthop *);
uint64_t fdp__underlay_version(const struct fdp_dp *);
bool fdp__underlay_is_local(const struct fdp_dp *,
                            const struct in6_addr *addr);

#endif /* FDP_UNDERLAY_PENDING_H */
