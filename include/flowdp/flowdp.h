/*
 * flowdp: the whole public API.
 */
#ifndef FLOWDP_FLOWDP_H
#define FLOWDP_FLOWDP_H 1

#include <flowdp/actions.h>
#include <flowdp/common.h>
#include <flowdp/cpu.h>
#include <flowdp/datapath.h>
#include <flowdp/flow.h>
#include <flowdp/group.h>
#include <flowdp/hash.h>
#include <flowdp/key.h>
#include <flowdp/match.h>
#include <flowdp/meter.h>
#include <flowdp/normal.h>
#include <flowdp/pipeline.h>
#include <flowdp/ring.h>
#include <flowdp/table.h>
#include <flowdp/underlay.h>
#include <flowdp/tlv-map.h>

#endif /* FLOWDP_FLOWDP_H */
