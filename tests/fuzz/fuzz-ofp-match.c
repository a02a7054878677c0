/*
 * libFuzzer target: the OpenFlow match decoders (lib/ofp-match.c).  The
 * first byte of each input picks the decoder (NXM/OXM entries, OpenFlow
 * 1.1+'s ofp_match, OpenFlow 1.0's ofp_match, NXM with a cookie); the rest
 * is the bytes, copied into a buffer of exactly their size so that ASan
 * catches any read past the end.  A decoder must return 0 or an enum
 * fdp_ofperr; a match that decodes must re-encode (when it has a wire
 * form) to bytes that decode to the same match.  Seeds in
 * tests/fuzz/corpus/fuzz-ofp-match: a few of tests/ofp-match.vectors.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/match-internal.h"
#include "lib/ofp-match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
is_result(int error)
{
    return !error || (error > FDP__OFPERR_BASE && error < FDP__OFPERR_END);
}

static int
decode(unsigned int kind, const uint8_t *p, size_t n, struct fdp_match *m)
{
    struct fdp__ofp_reader r;
    uint64_t cookie, cookie_mask;

    fdp__ofp_reader_init(&r, p, n);
    switch (kind) {
    case 0:
        return fdp__nx_match_pull(&r, n, NULL, m);
    case 1:
        return fdp__ofp11_match_pull(&r, NULL, m);
    case 2:
        return n < FDP_OFP10_MATCH_LEN ? FDP_OFPBMC_BAD_LEN
                                       : fdp__ofp10_match_decode(p, m);
    default:
        return fdp__nx_match_pull_cookie(&r, n, NULL, m, &cookie,
                                         &cookie_mask);
    }
}

static int
encode(unsigned int kind, const struct fdp_match *m, struct fdp__ofpbuf *b)
{
    switch (kind) {
    case 1:
        return fdp__ofp11_match_put(b, m, FDP_OFP13, NULL);
    case 2: {
        uint8_t *w = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
        return !w || fdp__ofp10_match_encode(m, w) ? -1
                                                    : FDP_OFP10_MATCH_LEN;
    }
    default:
        return fdp__nx_match_put(b, m, false, FDP_OFP10, NULL);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) {
        return 0;
    }
    unsigned int kind = data[0] % 4;
    size--;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) {
        return 0;
    }
    memcpy(copy, data + 1, size);

    struct fdp_match m;
    fdp__match_init(&m);
    int error = decode(kind, copy, size, &m);
    if (!is_result(error)) {
        abort();
    }
    if (!error) {
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        int len = encode(kind, &m, &b);
        if (len >= 0 && !fdp__ofpbuf_failed(&b)) {
            struct fdp_match back;
            fdp__match_init(&back);
            if (decode(kind == 3 ? 0 : kind, b.data, (size_t) len, &back)
                || !fdp_match_equal(&back, &m)) {
                abort();
            }
        }
        fdp__ofpbuf_uninit(&b);
    }
    free(copy);
    return 0;
}
