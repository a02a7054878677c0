/*
 * libFuzzer target: packet parsing (datapath/extract.c).  Each input is a
 * frame; it is copied into a buffer of exactly its size so that ASan
 * catches any read past the end.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flowdp/datapath.h"

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
