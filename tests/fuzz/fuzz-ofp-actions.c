/*
 * libFuzzer target: the OpenFlow action and instruction decoders
 * (lib/ofp-actions.c).  The first byte chooses the version (OpenFlow 1.0,
 * 1.3 or 1.5) and whether the rest is an action list or instructions.  An
 * input that decodes must encode, and the encoding must decode to the
 * same list (a decoded list always has a wire form).
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/actions.h>
#include "lib/ofp-actions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
decode(const uint8_t *p, size_t n, enum fdp_ofp_version v, bool insts,
       struct fdp_actions **actsp)
{
    struct fdp__ofp_reader r;

    fdp__ofp_reader_init(&r, p, n);
    return insts ? fdp__ofp_instructions_pull(&r, n, v, NULL, actsp)
                 : fdp__ofp_actions_pull(&r, n, v, NULL, actsp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum fdp_ofp_version versions[] = {
        FDP_OFP10, FDP_OFP13, FDP_OFP15,
    };
    struct fdp_actions *acts = NULL, *again = NULL;

    if (!size) {
        return 0;
    }
    enum fdp_ofp_version v = versions[data[0] % 3];
    bool insts = (data[0] >> 2) & 1;
    /* A copy of exactly the input's size, so that ASan sees any read past
     * the end. */
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    if (!copy) {
        return 0;
    }
    memcpy(copy, data + 1, size - 1);
    if (!decode(copy, size - 1, v, insts, &acts)) {
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        int n = insts ? fdp__ofp_instructions_put(&b, acts, v, NULL)
                      : fdp__ofp_actions_put(&b, acts, v, NULL);
        if (n < 0 || decode(b.data, b.size, v, insts, &again)) {
            abort();
        }
        struct fdp__ofpbuf b2;
        fdp__ofpbuf_init(&b2);
        n = insts ? fdp__ofp_instructions_put(&b2, again, v, NULL)
                  : fdp__ofp_actions_put(&b2, again, v, NULL);
        if (n < 0 || b2.size != b.size
            || (b.size && memcmp(b.data, b2.data, b.size))) {
            abort();
        }
        fdp__ofpbuf_uninit(&b);
        fdp__ofpbuf_uninit(&b2);
    }
    fdp_actions_destroy(acts);
    fdp_actions_destroy(again);
    free(copy);
    return 0;
}
