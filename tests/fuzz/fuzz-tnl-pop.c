/*
 * libFuzzer target: tunnel decapsulation (datapath/tnl-header.c).  The
 * first byte of each input picks the tunnel kind, the group policy
 * extension and where the IP header starts (14, or anywhere in the first
 * 64 bytes); the rest is the frame, copied into a buffer of exactly its
 * size so that ASan catches any read past the end.  An accepted packet's
 * inner frame must lie inside it, be at least an Ethernet header, and its
 * metadata must mark only the slots where the map's options start.
 * Seeds in tests/fuzz/corpus/fuzz-tnl-pop: a VXLAN, a Geneve (with both
 * mapped options) and a GRE packet, each over IPv4.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/tnl-header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The unit test's map (tests/unit/test-tunnel.c): two options in slots
 * 0 to 2. */
static const struct fdp__tnl_tlv tlvs[] = {
    { .opt_class = 0xffff, .type = 0x80, .len = 4, .ofs = 0, .index = 0 },
    { .opt_class = 0x0102, .type = 0x03, .len = 8, .ofs = 4, .index = 1 },
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) {
        return 0;
    }
    uint8_t sel = data[0];
    size--;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        return 0;
    }
    memcpy(copy, data + 1, size);

    enum fdp__tnl_kind kind = (enum fdp__tnl_kind) (sel % 3);
    bool gbp = (sel >> 2) & 1;
    uint32_t l3 = (sel >> 3) & 1 ? (uint32_t) (sel >> 4) * 4 : 14;
    struct fdp__tnl_tlv_map map = { 2, tlvs };
    struct fdp__tnl_md md;
    uint32_t ofs, inner;
    enum fdp__tnl_drop why;

    if (fdp__tnl_pop(copy, (uint32_t) size, l3, kind, gbp, &map, &md, &ofs,
                     &inner, &why)) {
        if ((uint64_t) ofs + inner > size || inner < 14
            || (md.present & ~0x03)) {
            abort();
        }
    } else if ((unsigned int) why >= FDP__TNL_N_DROPS) {
        abort();
    }
    free(copy);
    return 0;
}
