/*
 * flowdp: TLV maps, which place Geneve options in the flow key.
 *
 * A Geneve header carries options, each a (class, type, length) TLV.  A
 * flow matches one through a field tun_metadata0..tun_metadata63 that a
 * TLV map binds to an option, as Open vSwitch's add-tlv-map does:
 *
 *   {class=0xffff,type=0,len=4}->tun_metadata0
 *
 * gives option (0xffff, 0) 4 bytes of the key's tunnel-metadata space
 * (key.h: 32 bytes, eight 4-byte slots) and the name tun_metadata0.  A
 * decapsulated packet's option of that class and type is copied there
 * and the slot's presence bit set; a flow that matches tun_metadata0
 * matches those bytes and the presence bit.  Lengths are multiples of 4
 * from 4 to 32, and all the options of a map take at most 32 bytes.
 *
 * A pipeline has one map (fdp_pipeline_tlv_map()), empty at creation.
 * Changing a map does not change flows already added: their bytes stay
 * where the map put them when they were parsed, as in Open vSwitch.
 *
 * Thread-safety: modifiers (add, del, clear) serialise on the map's own
 * mutex and publish a new version with RCU; the datapath's lookups
 * (lib/tlv-map.h) and fdp_tlv_map_dump() may run at any time, on any
 * thread.
 */
#ifndef FLOWDP_TLV_MAP_H
#define FLOWDP_TLV_MAP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <flowdp/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fdp_tlv_map;

/* The most options a map names (tun_metadata0..63) and the bytes they
 * may take in all. */
#define FDP_TLV_MAP_FIELDS 64
#define FDP_TLV_MAP_SPACE 32

/* Creates an empty map in '*mapp'.  Returns 0 or ENOMEM. */
FDP_API int fdp_tlv_map_create(struct fdp_tlv_map **mapp);

/* Destroys 'map' (NULL is fine).  No lookup may be running on it. */
FDP_API void fdp_tlv_map_destroy(struct fdp_tlv_map *map);

/* Adds the mappings of 'text', "{class=C,type=T,len=L}->tun_metadataN"
 * separated by commas (ovs-ofctl add-tlv-map's syntax), all or none.
 * Returns 0; EINVAL for bad text, a length that is not a multiple of 4
 * from 4 to 32, an index above 63, an index or an option already mapped
 * (by the map or earlier in 'text'), or a map that would need more than
 * 32 bytes; ENOMEM.  On error '*errorp' (if not NULL) gets a message to
 * free(). */
FDP_API int fdp_tlv_map_add(struct fdp_tlv_map *map, const char *text,
                            char **errorp);

/* Removes the mappings of 'text' (same syntax; each must be mapped as
 * written), all or none, or every mapping if 'text' is NULL or empty
 * (ovs-ofctl del-tlv-map without mappings).  Returns 0, EINVAL (with
 * '*errorp' as above) or ENOMEM. */
FDP_API int fdp_tlv_map_del(struct fdp_tlv_map *map, const char *text,
                            char **errorp);

/* The map as ovs-ofctl dump-tlv-map prints it (without its first line),
 * for the caller to free(); NULL if out of memory. */
FDP_API char *fdp_tlv_map_dump(const struct fdp_tlv_map *map);

/* The mappings as add-tlv-map's text ("" if none), in index order, for
 * the caller to free(): what a journal stores.  NULL if out of memory. */
FDP_API char *fdp_tlv_map_to_text(const struct fdp_tlv_map *map);

/* Where tun_metadata'index' is in the key's tunnel-metadata space: true,
 * with its offset and length in bytes, or false if 'map' does not name
 * it.  Any thread. */
FDP_API bool fdp_tlv_map_field(const struct fdp_tlv_map *map,
                               unsigned int index, unsigned int *offset,
                               unsigned int *len);

/* Makes this thread's flow parser and formatter (flowdp/flow.h) read
 * tun_metadataN through 'map' (NULL: no map; then each flow lays its
 * tun_metadata fields out itself, as ovs-ofctl parse-flows does without a
 * switch: see lib/tun-md-text.c).  The map must outlive the calls. */
FDP_API void fdp_tlv_map_use_for_text(const struct fdp_tlv_map *map);

#ifdef __cplusplus
}
#endif

#endif /* FLOWDP_TLV_MAP_H */
