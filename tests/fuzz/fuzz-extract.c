/*
 * libFuzzer target: packet parsing (datapath/extract.c).  Each input is a
 * frame; it is copied into a buffer of exactly its size so that ASan
 * catches any read past the end.  fdp__packet_extract_hash() must give
 * the same key and layout, and fdp_hash_fast() of that key.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/extract-internal.h"
#include <flowdp/datapath.h>
#include <flowdp/hash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    struct fdp_key key;
    struct fdp_packet_layout layout;

    if (!copy) {
        return 0;
    }
    memcpy(copy, data, size);
    fdp_packet_extract(copy, size, 1, &key, &layout);
    struct fdp_key key2;
    struct fdp_packet_layout layout2;
    uint32_t hash = fdp__packet_extract_hash(copy, size, 1, 0x1234, &key2,
                                             &layout2);
    if (memcmp(&key, &key2, sizeof key) || memcmp(&layout, &layout2,
                                                  sizeof layout)
        || hash != fdp_hash_fast(key.w, FDP_KEY_PACKET_WORDS, 0x1234)) {
        abort();
    }
    /* Layer offsets must lie inside the packet and in order. */
    if (layout.l3 >= 0 && (size_t) layout.l3 > size) {
        abort();
    }
    if (layout.l4 >= 0 && (layout.l4 < layout.l3 || (size_t) layout.l4 > size)) {
        abort();
    }
    free(copy);
    return 0;
}
