/*
 * TLV maps (internal): the lock-free lookups the datapath and the flow
 * syntax make.  See include/flowdp/tlv-map.h for the API and lib/tlv-map.c
 * for the design.
 */
#ifndef FDP_TLV_MAP_INTERNAL_H
#define FDP_TLV_MAP_INTERNAL_H 1

#include <stdbool.h>
#include <stdint.h>

#include <flowdp/tlv-map.h>
#include <flowdp/key.h>

/* Where an option goes, by option (class, type), for a Geneve decap:
 * 'offset' and 'len' in bytes within the key's 32-byte tunnel-metadata
 * space (key.h, words 37-40, byte 0 the most significant of word 37), and
 * the slot offset / 4 whose presence bit (bit offset / 4 of word 32) the
 * decap sets.  Returns 0, or ENOENT if the map has no such option (the
 * decap then skips it, as Open vSwitch skips an unmapped option).  The
 * caller must be in an RCU read-side section (fdp__rcu_read_lock()), as
 * every pmd is; the lookup takes no lock and reads one cache line. */
int fdp__tlv_map_lookup(const struct fdp_tlv_map *map, uint16_t opt_class,
                        uint8_t type, unsigned int *offset,
                        unsigned int *len);

/* The option whose bytes start at slot 'slot' (0..7, offset / 4) of the
 * tunnel-metadata space, for a Geneve encap that turns a key's present
 * options back into TLVs: 0 with its class, type and length in bytes, or
 * ENOENT if no option of the map starts there.  The caller must be in an
 * RCU read-side section, as for fdp__tlv_map_lookup(). */
int fdp__tlv_map_at(const struct fdp_tlv_map *map, unsigned int slot,
                    uint16_t *opt_class, uint8_t *type, unsigned int *len);

/* Where tun_metadata'index' is: true and its offset and length, or false
 * if the map does not name it.  Any thread (it enters its own RCU read
 * section). */
bool fdp__tlv_map_field(const struct fdp_tlv_map *map, unsigned int index,
                        unsigned int *offset, unsigned int *len);

/* One mapped option, for a Geneve encapsulation. */
struct fdp__tlv_opt_info {
    uint16_t opt_class;
    uint8_t type;
    uint8_t offset;             /* Bytes into the space. */
    uint8_t len;                /* Bytes. */
    uint8_t index;              /* tun_metadata<index>. */
};

/* The map's options as they are now, in increasing order of their
 * tun_metadata index (the order Open vSwitch writes a Geneve header's
 * options in), into 'opts' (room for FDP__TUN_MD_SLOTS), and returns how
 * many.  As fdp__tlv_map_lookup(): in an RCU read-side section, no
 * lock. */
size_t fdp__tlv_map_options(const struct fdp_tlv_map *map,
                            struct fdp__tlv_opt_info *opts);

/* Writes the option value 'data' (of 'len' bytes, as the option carries
 * it, big-endian) at 'offset' of 'key''s tunnel-metadata space and sets
 * the slot's presence bit: what a Geneve decap does with each option
 * fdp__tlv_map_lookup() placed.  'offset' + 'len' <= 32, both multiples
 * of 4. */
void fdp__tun_md_put(struct fdp_key *key, unsigned int offset,
                     const uint8_t *data, unsigned int len);

/* Reads 'len' bytes at 'offset' of 'key''s tunnel-metadata space into
 * 'data' (what a Geneve encap puts in an option), and returns whether the
 * slot's presence bit is set. */
bool fdp__tun_md_get(const struct fdp_key *key, unsigned int offset,
                     uint8_t *data, unsigned int len);

#endif /* FDP_TLV_MAP_INTERNAL_H */
