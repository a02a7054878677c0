/*
 * libFuzzer target: the OpenFlow message decoder (lib/ofp-msgs.c).  Each
 * input is one message, copied into a buffer of exactly its size so that
 * ASan catches any read past the end.  Every decoder must return 0 or an
 * enum fdp_ofperr; a header that decodes must say a length that is the
 * input's, and an echo request must be answered with its own payload.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ofp-msgs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_error(int error)
{
    if (error && (error <= FDP__OFPERR_BASE || error >= FDP__OFPERR_END)
        && error != EOF && error != EPROTO) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *msg = malloc(size ? size : 1);
    if (!msg) {
        return 0;
    }
    memcpy(msg, data, size);

    struct fdp_ofp_header oh;
    int error = fdp_ofp_decode_header(msg, size, &oh);
    check_error(error);
    if (!error && (oh.length != size || oh.hdr_len > size)) {
        abort();
    }
    check_error(fdp_ofp_decode_header_partial(msg, size, &oh));

    uint32_t peer, port;
    struct fdp_ofp_error e;
    struct fdp_ofp_features f;
    struct fdp_ofp_switch_config sc;
    struct fdp_ofp_desc d;
    struct fdp_ofp_port pp;
    struct fdp_ofp_aggregate_stats as;
    uint8_t reason;
    check_error(fdp_ofp_decode_hello(msg, size, &peer));
    check_error(fdp_ofp_decode_error(msg, size, &e));
    if (!fdp_ofp_decode_features_reply(msg, size, &f)) {
        free(f.ports);
    }
    check_error(fdp_ofp_decode_switch_config(msg, size, &sc));
    check_error(fdp_ofp_decode_desc_reply(msg, size, &d));
    check_error(fdp_ofp_decode_port_status(msg, size, &reason, &pp));
    check_error(fdp_ofp_decode_port_desc_request(msg, size, &port));
    check_error(fdp_ofp_decode_port_stats_request(msg, size, &port));
    check_error(fdp_ofp_decode_aggregate_reply(msg, size, &as));

    if (!fdp_ofp_decode_header(msg, size, &oh)) {
        struct fdp__ofp_reader r;
        struct fdp_ofp_port_stats ps;
        struct fdp_ofp_table_stats ts;
        fdp__ofp_reader_init(&r, msg + oh.hdr_len, size - oh.hdr_len);
        while (!fdp_ofp_pull_port(&r, oh.version, &pp)) {
            continue;
        }
        fdp__ofp_reader_init(&r, msg + oh.hdr_len, size - oh.hdr_len);
        while (!fdp_ofp_pull_port_stats(&r, oh.version, &ps)) {
            continue;
        }
        fdp__ofp_reader_init(&r, msg + oh.hdr_len, size - oh.hdr_len);
        while (!fdp_ofp_pull_table_stats(&r, oh.version, &ts)) {
            continue;
        }

        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        if (fdp_ofp_encode_error(&b, FDP_OFPBRC_BAD_LEN, msg, size,
                                 oh.version)) {
            abort();
        }
        if (oh.type == FDP_OFPTYPE_ECHO_REQUEST) {
            size_t start = b.size;
            if (fdp_ofp_encode_echo_reply(&b, msg, size)
                || b.size - start != size
                || memcmp(b.data + start + 8, msg + 8, size - 8)) {
                abort();
            }
        }
        fdp__ofpbuf_uninit(&b);
    }
    free(msg);
    return 0;
}
