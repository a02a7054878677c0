/*
 * libFuzzer target: the OpenFlow message decoder (lib/ofp-msgs.c, and
 * lib/ofp-group.c's groups, meters, TLV tables and conntrack flushes).  Each
 * input is one message, copied into a buffer of exactly its size so that
 * ASan catches any read past the end.  Every decoder must return 0 or an
 * enum fdp_ofperr; a header that decodes must say a length that is the
 * input's, and an echo request must be answered with its own payload.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
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

    struct fdp_ofp_bundle_ctrl bc;
    struct fdp_ofp_bundle_add ba;
    struct fdp_ofp_role_request rr;
    struct fdp_ofp_async_config cfg;
    uint32_t u32;
    uint16_t u16;
    bool on;
    memset(&cfg, 0, sizeof cfg);
    check_error(fdp_ofp_decode_bundle_ctrl(msg, size, &bc));
    error = fdp_ofp_decode_bundle_add(msg, size, &ba);
    check_error(error);
    if (!error && (ba.inner < msg || ba.inner + ba.inner_len > msg + size)) {
        abort();
    }
    check_error(fdp_ofp_decode_role_request(msg, size, &rr));
    check_error(fdp_ofp_decode_set_async(msg, size, &cfg));
    check_error(fdp_ofp_decode_nx_u32(msg, size, &u32));
    check_error(fdp_ofp_decode_flow_mod_table_id(msg, size, &on));
    check_error(fdp_ofp_decode_controller_id(msg, size, &u16));
    check_error(fdp_ofp_decode_ct_flush_zone(msg, size, &u16));
    check_error(fdp_ofp_decode_flow_monitor_cancel(msg, size, &u32));

    /* Groups, meters, TLV tables, conntrack flushes (lib/ofp-group.c). */
    struct fdp_ofp_group g;
    struct fdp_ofp_meter_mod mm;
    struct fdp_ofp_tlv_table tt;
    struct fdp_ofp_ct_flush cf;
    struct fdp_ofp_group_features gf;
    struct fdp_ofp_meter_features mf;
    error = fdp_ofp_decode_group_mod(msg, size, NULL, &g);
    check_error(error);
    if (!error) {
        /* What decodes encodes again (1.1's actions excepted), and the
         * re-encoding decodes. */
        struct fdp__ofpbuf gb;
        fdp__ofpbuf_init(&gb);
        if (!fdp_ofp_encode_group_mod(&gb, &g, msg[0], 1, NULL)
            && !fdp__ofpbuf_failed(&gb)) {
            struct fdp_ofp_group g2;
            if (fdp_ofp_decode_group_mod(gb.data, gb.size, NULL, &g2)) {
                abort();
            }
            fdp_ofp_group_destroy(&g2);
        }
        fdp__ofpbuf_uninit(&gb);
        char *text = fdp_ofp_group_to_text(&g);
        free(text);
        fdp_ofp_group_destroy(&g);
    }
    check_error(fdp_ofp_decode_group_request(msg, size, &u32));
    check_error(fdp_ofp_decode_group_features_reply(msg, size, &gf));
    check_error(fdp_ofp_decode_meter_mod(msg, size, &mm));
    check_error(fdp_ofp_decode_meter_request(msg, size, &u32));
    check_error(fdp_ofp_decode_meter_features_reply(msg, size, &mf));
    check_error(fdp_ofp_decode_tlv_table(msg, size, &tt));
    check_error(fdp_ofp_decode_ct_flush(msg, size, &cf));

    if (!fdp_ofp_decode_header(msg, size, &oh)) {
        struct fdp__ofp_reader gr;
        struct fdp_ofp_group_stats gs;
        struct fdp_meter_config mc;
        struct fdp_meter_stats ms;
        fdp__ofp_reader_init(&gr, msg + oh.hdr_len, size - oh.hdr_len);
        while (!(error = fdp_ofp_pull_group_desc(&gr, oh.version, NULL,
                                                 &g))) {
            fdp_ofp_group_destroy(&g);
        }
        check_error(error);
        fdp__ofp_reader_init(&gr, msg + oh.hdr_len, size - oh.hdr_len);
        while (!(error = fdp_ofp_pull_group_stats(&gr, oh.raw, &gs))) {
            free(gs.buckets);
        }
        check_error(error);
        fdp__ofp_reader_init(&gr, msg + oh.hdr_len, size - oh.hdr_len);
        while (!(error = fdp_ofp_pull_meter_config(&gr, &mc))) {
            continue;
        }
        check_error(error);
        fdp__ofp_reader_init(&gr, msg + oh.hdr_len, size - oh.hdr_len);
        while (!(error = fdp_ofp_pull_meter_stats(&gr, &ms))) {
            continue;
        }
        check_error(error);
    }

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
