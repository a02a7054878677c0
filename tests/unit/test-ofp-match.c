/*
 * Unit tests for the OpenFlow codec's fields and matches
 * (lib/ofp-match.c).
 *
 *   - The field table: every header row is found by its header and by its
 *     name, its wire field's rows are adjacent and in version order, every
 *     NXM/OXM name that lib/actions.c accepts in load and move has a row
 *     with the same field, width and writability, and every row's value
 *     and mask conversions round-trip random values.
 *
 *   - Byte-exact vectors: tests/ofp-match.vectors holds, for about 400
 *     flows, the NXM, OpenFlow 1.3 and 1.5 OXM and OpenFlow 1.0 encodings
 *     of their matches as Open vSwitch's ovs-ofctl writes them
 *     (tests/ofp-match-gen.py made the file; no ovs-ofctl is needed here).
 *     Each flow is parsed with flowdp's parser, encoded and compared byte
 *     for byte, then decoded and compared with the parsed match.
 *
 *   - Hostile input: hand-made bad entries get the error Open vSwitch
 *     gives (checked against "ovs-ofctl --strict parse-oxm OpenFlow13"),
 *     and random bytes and mutated vectors (from the printed seed) either
 *     decode or return an error, never crash; what decodes re-encodes to
 *     bytes that decode to the same match.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flow.h>
#include <flowdp/tlv-map.h>
#include "lib/actions-internal.h"
#include "lib/match-internal.h"
#include "lib/ofp-match.h"
#include "unit.h"

#ifndef FDP_OFP_MATCH_VECTORS
#define FDP_OFP_MATCH_VECTORS "tests/ofp-match.vectors"
#endif

/* ---------------------------------------------------------------------- */
/* Helpers.                                                                 */

static const char *const ofperr_names[] = {
#define NAME(N) #N,
    FDP_OFPERRS(NAME)
#undef NAME
};

static const char *
err_name(int error)
{
    static char buf[32];

    if (!error) {
        return "0";
    }
    if (error > FDP__OFPERR_BASE && error < FDP__OFPERR_END) {
        return ofperr_names[error - FDP__OFPERR_BASE - 1];
    }
    snprintf(buf, sizeof buf, "errno %d", error);
    return buf;
}

static bool
is_ofperr(int error)
{
    return error > FDP__OFPERR_BASE && error < FDP__OFPERR_END;
}

/* Decodes hex (spaces allowed) into 'out'; returns the length. */
static size_t
unhex(const char *s, uint8_t *out, size_t max)
{
    size_t n = 0;
    int hi = -1;

    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9') {
            d = *s - '0';
        } else if (*s >= 'a' && *s <= 'f') {
            d = *s - 'a' + 10;
        } else if (*s >= 'A' && *s <= 'F') {
            d = *s - 'A' + 10;
        } else {
            continue;
        }
        if (hi < 0) {
            hi = d;
        } else {
            ck_assert(n < max);
            out[n++] = (uint8_t) (hi << 4 | d);
            hi = -1;
        }
    }
    ck_assert(hi < 0);
    return n;
}

static char *
tohex(const uint8_t *p, size_t n)
{
    char *s = malloc(2 * n + 1);

    ck_assert(s != NULL);
    for (size_t i = 0; i < n; i++) {
        sprintf(s + 2 * i, "%02x", p[i]);
    }
    s[2 * n] = '\0';
    return s;
}

static struct fdp_match *
parse_match(const char *text)
{
    struct fdp_flow_spec spec;
    char *error = NULL;

    memset(&spec, 0, sizeof spec);
    int r = fdp_flow_parse(text, 0, &spec, &error);
    ck_assert_msg(r == 0, "%s: %s", text, error ? error : "?");
    struct fdp_match *m = spec.match;
    spec.match = NULL;
    fdp_flow_spec_destroy(&spec);
    return m;
}

static char *
match_text(const struct fdp_match *m)
{
    char *s = fdp_match_format(m, FDP_DEFAULT_PRIORITY);
    ck_assert(s != NULL);
    return s;
}

/* ---------------------------------------------------------------------- */
/* The field table.                                                         */

START_TEST(rows_found_by_header_and_name)
{
    size_t n = fdp__ofp_n_fields();

    ck_assert(n > 100);
    ck_assert(fdp__ofp_field_at(n) == NULL);
    for (size_t i = 0; i < n; i++) {
        const struct fdp__ofp_field *f = fdp__ofp_field_at(i);
        uint32_t h = fdp__ofp_field_header(f);
        uint32_t exp = fdp__ofp_field_experimenter(f);
        const char *name = fdp__ofp_field_name(f);

        ck_assert_msg(fdp__ofp_field_by_header(h, exp) == f,
                      "%s: not found by its header %#x", name, h);
        /* The hasmask bit and the length do not matter. */
        ck_assert(fdp__ofp_field_by_header(h | 0x1ff, exp) == f);
        ck_assert_msg(fdp__ofp_field_by_name(name) == f, "%s", name);

        /* Lengths: an experimenter header counts its id. */
        unsigned int exp_len = (h >> 16) == 0xffff ? 4 : 0;
        ck_assert_uint_eq(h & 0xff, fdp__ofp_field_n_bytes(f) + exp_len);
        ck_assert(fdp__ofp_field_n_bits(f) <= 8 * fdp__ofp_field_n_bytes(f));
        ck_assert(!(h & 0x100));

        /* Names say the class. */
        uint16_t class = (uint16_t) (h >> 16);
        if (!strncmp(name, "NXM_OF_", 7)) {
            ck_assert_uint_eq(class, 0);
        } else if (!strncmp(name, "NXM_NX_", 7)) {
            ck_assert_uint_eq(class, 1);
        } else if (!strncmp(name, "OXM_OF_PKT_REG", 14)) {
            ck_assert_uint_eq(class, 0x8001);
        } else if (!strncmp(name, "OXM_OF_", 7)) {
            ck_assert_uint_eq(class, 0x8000);
        } else if (!strncmp(name, "ONFOXM_ET_", 10)) {
            ck_assert_uint_eq(class, 0xffff);
            ck_assert_uint_eq(fdp__ofp_field_experimenter(f), 0x4f4e4600);
        } else {
            ck_assert_msg(!strncmp(name, "ERICOXM_OF_", 11), "%s", name);
            ck_assert_uint_eq(class, 0x1000);
        }
        if (fdp__ofp_field_tun_md_index(f) >= 0) {
            ck_assert_uint_eq(fdp__ofp_field_id(f), FDP_N_FIELDS);
            ck_assert_uint_eq((h >> 9) & 0x7f,
                              40 + fdp__ofp_field_tun_md_index(f));
        } else {
            ck_assert(fdp__ofp_field_id(f) < FDP_N_FIELDS);
        }
    }
    ck_assert(fdp__ofp_field_by_header(FDP_NXM_HEADER(0x8000, 127, 0, 4), 0)
              == NULL);
    ck_assert(fdp__ofp_field_by_name("NXM_NX_NO_SUCH") == NULL);
}
END_TEST

/* The examples of the task: a few rows spelled out. */
START_TEST(known_headers)
{
    static const struct {
        const char *name;
        uint32_t header;
        uint32_t experimenter;
        enum fdp_field field;
    } known[] = {
        { "NXM_OF_IN_PORT", 0x00000002, 0, FDP_F_IN_PORT },
        { "OXM_OF_IN_PORT", 0x80000004, 0, FDP_F_IN_PORT },
        { "NXM_NX_REG0", 0x00010004, 0, FDP_F_REG0 },
        { "NXM_NX_REG15", 0x00011e04, 0, FDP_F_REG15 },
        { "OXM_OF_PKT_REG0", 0x80010008, 0, FDP_F_XREG0 },
        { "NXM_NX_XXREG3", 0x0001e410, 0, FDP_F_XXREG3 },
        { "NXM_NX_CT_STATE", 0x0001d204, 0, FDP_F_CT_STATE },
        { "NXM_NX_TUN_METADATA0", 0x00015000 | 32, 0, FDP_N_FIELDS },
        { "NXM_NX_TUN_METADATA63", 0x0001ce00 | 32, 0, FDP_N_FIELDS },
        { "NXM_OF_IP_TOS", 0x00000a01, 0, FDP_F_NW_TOS },
        { "OXM_OF_IP_DSCP", 0x80001001, 0, FDP_F_NW_TOS },
        { "OXM_OF_VLAN_VID", 0x80000c02, 0, FDP_F_DL_VLAN },
        { "ONFOXM_ET_TCP_FLAGS", 0xffff5406, 0x4f4e4600, FDP_F_TCP_FLAGS },
        { "OXM_OF_TCP_FLAGS", 0x80005402, 0, FDP_F_TCP_FLAGS },
        { "ERICOXM_OF_ICMPV6_ND_RESERVED", 0x10000204, 0,
          FDP_F_ND_RESERVED },
        { "NXM_NX_IP_FRAG", 0x00013401, 0, FDP_F_IP_FRAG },
    };

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const struct fdp__ofp_field *f = fdp__ofp_field_by_name(known[i].name);
        ck_assert_msg(f != NULL, "%s", known[i].name);
        ck_assert_msg(fdp__ofp_field_header(f) == known[i].header,
                      "%s: %#x", known[i].name, fdp__ofp_field_header(f));
        ck_assert_uint_eq(fdp__ofp_field_experimenter(f),
                          known[i].experimenter);
        ck_assert_uint_eq(fdp__ofp_field_id(f), known[i].field);
    }

    /* Which header a version writes. */
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_IN_PORT,
                                                            FDP_OFP10)),
                     "NXM_OF_IN_PORT");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_IN_PORT,
                                                            FDP_OFP13)),
                     "OXM_OF_IN_PORT");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_TCP_FLAGS,
                                                            FDP_OFP13)),
                     "ONFOXM_ET_TCP_FLAGS");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_TCP_FLAGS,
                                                            FDP_OFP15)),
                     "OXM_OF_TCP_FLAGS");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_PKT_MARK,
                                                            FDP_OFP13)),
                     "NXM_NX_PKT_MARK");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_NW_TOS,
                                                            FDP_OFP12)),
                     "OXM_OF_IP_DSCP");
    ck_assert_str_eq(fdp__ofp_field_name(fdp__ofp_field_for(FDP_F_XREG2,
                                                            FDP_OFP10)),
                     "OXM_OF_PKT_REG2");
    ck_assert(fdp__ofp_field_for(FDP_F_TUN_TOS, FDP_OFP13) == NULL);

    struct fdp_match *udp = parse_match("udp,actions=drop");
    ck_assert_str_eq(fdp__ofp_field_name(
                         fdp__ofp_field_for_match(FDP_F_TP_DST, FDP_OFP13,
                                                  udp)),
                     "OXM_OF_UDP_DST");
    ck_assert_str_eq(fdp__ofp_field_name(
                         fdp__ofp_field_for_match(FDP_F_TP_DST, FDP_OFP10,
                                                  udp)),
                     "NXM_OF_UDP_DST");
    fdp_match_destroy(udp);
}
END_TEST

/* Every name of lib/actions.c's fdp__nxm_fields (the names load and move
 * take) has a row with the same field, width and writability. */
START_TEST(agrees_with_action_names)
{
    for (size_t i = 0; i < fdp__n_nxm_fields; i++) {
        const struct fdp__nxm_field *nf = &fdp__nxm_fields[i];
        const struct fdp__ofp_field *f = fdp__ofp_field_by_name(nf->name);

        ck_assert_msg(f != NULL, "%s has no row", nf->name);
        ck_assert_msg(fdp__ofp_field_id(f) == nf->field, "%s", nf->name);
        ck_assert_msg(fdp__ofp_field_n_bits(f) == nf->n_bits, "%s: %u bits",
                      nf->name, fdp__ofp_field_n_bits(f));
        ck_assert_msg(fdp__ofp_field_writable(f) == nf->writable, "%s",
                      nf->name);
    }
}
END_TEST

/* Values and masks round-trip through the wire for every row. */
START_TEST(values_round_trip)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 1);
    for (size_t i = 0; i < fdp__ofp_n_fields(); i++) {
        const struct fdp__ofp_field *f = fdp__ofp_field_at(i);
        enum fdp_field id = fdp__ofp_field_id(f);
        uint8_t wire[32], wmask[32];

        if (id == FDP_N_FIELDS) {
            /* tun_metadata: through the TLV map only. */
            ck_assert_int_eq(fdp__ofp_field_from_wire(f, wire,
                                                      &(fdp_u128) { 0 }),
                             FDP_OFPBMC_BAD_FIELD);
            continue;
        }
        const struct fdp__field *kf = fdp__field(id);
        for (int round = 0; round < 200; round++) {
            fdp_u128 v = ((fdp_u128) unit_rng_next(&rng) << 64)
                         | unit_rng_next(&rng);
            v &= fdp__ones(kf->n_bits);
            if (v > kf->max) {
                v %= kf->max + 1;
            }
            if (round == 0) {
                v = 0;
            } else if (round == 1) {
                v = kf->max;
            }
            if (id == FDP_F_IN_PORT && v >= FDP_PORT_MAX && v < 0xfff8
                && fdp__ofp_field_n_bytes(f) == 4) {
                /* 0xff00 to 0xfff7 have no OpenFlow 1.1 number. */
                v &= 0xff;
            }
            fdp__ofp_field_to_wire(f, v, wire);
            fdp_u128 back = ~(fdp_u128) 0;
            ck_assert_int_eq(fdp__ofp_field_from_wire(f, wire, &back), 0);
            ck_assert_msg(back == v, "%s: value round %d",
                          fdp__ofp_field_name(f), round);

            fdp_u128 m = ((fdp_u128) unit_rng_next(&rng) << 64)
                         | unit_rng_next(&rng);
            m &= fdp__ones(kf->n_bits);
            if (!fdp__ofp_field_maskable(f) || round == 2) {
                m = fdp__ones(kf->n_bits);
            } else if (round == 3) {
                m = 0;
            }
            fdp__ofp_mask_to_wire(f, m, wmask);
            fdp_u128 mback = ~(fdp_u128) 0;
            ck_assert_int_eq(fdp__ofp_mask_from_wire(f, wmask, &mback), 0);
            ck_assert_msg(mback == m, "%s: mask round %d",
                          fdp__ofp_field_name(f), round);
        }
    }

    /* OpenFlow 1.1 port numbers (ofputil_port_from_ofp11()). */
    const struct fdp__ofp_field *port = fdp__ofp_field_by_name(
        "OXM_OF_IN_PORT");
    uint8_t w[4];
    fdp_u128 v;
    fdp__ofp_field_to_wire(port, FDP_PORT_LOCAL, w);
    ck_assert_uint_eq(fdp__ofp_get_be32(w), 0xfffffffe);
    fdp__ofp_set_be32(w, 0xfffffff8);
    ck_assert_int_eq(fdp__ofp_field_from_wire(port, w, &v), 0);
    ck_assert(v == FDP_PORT_IN_PORT);
    fdp__ofp_set_be32(w, 0xffffff00);
    ck_assert_int_eq(fdp__ofp_field_from_wire(port, w, &v), 0);
    ck_assert(v == 0xff00);
    fdp__ofp_set_be32(w, 0xfffffeff);
    ck_assert_int_eq(fdp__ofp_field_from_wire(port, w, &v),
                     FDP_OFPBMC_BAD_VALUE);
    fdp__ofp_set_be32(w, 0xff00);
    ck_assert_int_eq(fdp__ofp_field_from_wire(port, w, &v),
                     FDP_OFPBMC_BAD_VALUE);

    /* OXM_OF_VLAN_VID's present bit; NXM_OF_IP_TOS's shift. */
    const struct fdp__ofp_field *vid = fdp__ofp_field_by_name(
        "OXM_OF_VLAN_VID");
    fdp__ofp_field_to_wire(vid, 5, w);
    ck_assert_uint_eq(fdp__ofp_get_be16(w), 0x1005);
    const struct fdp__ofp_field *tos = fdp__ofp_field_by_name("NXM_OF_IP_TOS");
    fdp__ofp_field_to_wire(tos, 10, w);
    ck_assert_uint_eq(w[0], 40);
    w[0] = 41;
    ck_assert_int_eq(fdp__ofp_field_from_wire(tos, w, &v),
                     FDP_OFPBMC_BAD_VALUE);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Byte-exact vectors from ovs-ofctl.                                       */

/* Encodes 'm' in 'fmt'; returns the bytes or -1. */
static int
encode(const char *fmt, const struct fdp_match *m, struct fdp__ofpbuf *b)
{
    if (!strcmp(fmt, "nxm")) {
        return fdp__nx_match_put(b, m, false, FDP_OFP10, NULL);
    } else if (!strcmp(fmt, "oxm13")) {
        return fdp__ofp11_match_put(b, m, FDP_OFP13, NULL);
    } else if (!strcmp(fmt, "oxm15")) {
        return fdp__ofp11_match_put(b, m, FDP_OFP15, NULL);
    }
    ck_assert_str_eq(fmt, "of10");
    uint8_t *w = fdp__ofpbuf_put_zeros(b, FDP_OFP10_MATCH_LEN);
    ck_assert(w != NULL);
    return fdp__ofp10_match_encode(m, w) ? -1 : FDP_OFP10_MATCH_LEN;
}

static int
decode(const char *fmt, const uint8_t *p, size_t n, struct fdp_match *m)
{
    struct fdp__ofp_reader r;

    fdp__ofp_reader_init(&r, p, n);
    if (!strcmp(fmt, "nxm")) {
        return fdp__nx_match_pull(&r, n, NULL, m);
    } else if (!strcmp(fmt, "of10")) {
        ck_assert_uint_eq(n, FDP_OFP10_MATCH_LEN);
        return fdp__ofp10_match_decode(p, m);
    }
    return fdp__ofp11_match_pull(&r, NULL, m);
}

START_TEST(ovs_vectors)
{
    FILE *f = fopen(FDP_OFP_MATCH_VECTORS, "r");
    ck_assert_msg(f != NULL, "%s: %s", FDP_OFP_MATCH_VECTORS,
                  strerror(errno));

    char line[4096];
    int n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        char *fields[4];
        char *p = line;
        for (int i = 0; i < 4; i++) {
            fields[i] = p;
            p = strchr(p, '\t');
            ck_assert(i == 3 || p != NULL);
            if (p) {
                *p++ = '\0';
            }
        }
        const char *fmt = fields[0], *text = fields[1], *hex = fields[2];
        const char *ovs = fields[3];

        /* "tcp_flags=V/0xfff" is the same match as "tcp_flags=V" in the
         * key (all 12 bits), which Open vSwitch tells apart on the wire
         * (masked, or not): flowdp writes the second. */
        bool tcp_flags_fff = strstr(text, "tcp_flags=")
                             && (strstr(text, "/0xfff,")
                                 || strstr(text, "/4095,"));

        /* flowdp's parse of the flow encodes to Open vSwitch's bytes. */
        uint8_t want[1024];
        size_t want_len = unhex(hex, want, sizeof want);
        struct fdp_match *m = parse_match(text);
        struct fdp__ofpbuf b;
        fdp__ofpbuf_init(&b);
        int len = encode(fmt, m, &b);
        n++;
        if ((len < 0 || (size_t) len != want_len
             || (want_len && memcmp(b.data, want, want_len)))
            && !tcp_flags_fff) {
            char *got = len < 0 ? strdup("(no wire form)")
                                : tohex(b.data, (size_t) len);
            if (bad++ < 40) {
                fprintf(stderr, "%s %s:\n  ovs    %s\n  flowdp %s\n", fmt,
                        text, hex, got);
            }
            free(got);
        }
        fdp__ofpbuf_uninit(&b);

        /* The bytes decode as Open vSwitch decodes them: the same error,
         * or the match it prints, which encodes to the same bytes. */
        struct fdp_match back;
        fdp__match_init(&back);
        int error = decode(fmt, want, want_len, &back);
        char *t = error ? NULL : match_text(&back);
        bool same;
        if (!strncmp(ovs, "err:", 4)) {
            same = error && !strcmp(err_name(error), ovs + 4);
        } else {
            ck_assert(!strncmp(ovs, "ok:", 3));
            same = !error && !strcmp(t, ovs + 3);
            if (same && !tcp_flags_fff) {
                fdp__ofpbuf_init(&b);
                len = encode(fmt, &back, &b);
                same = len == (int) want_len
                       && (!want_len || !memcmp(b.data, want, want_len));
                fdp__ofpbuf_uninit(&b);
            }
        }
        if (!same && bad++ < 40) {
            fprintf(stderr, "%s %s: decoded %s: flowdp %s, ovs %s\n", fmt,
                    text, hex, error ? err_name(error) : t, ovs);
        }
        free(t);
        fdp_match_destroy(m);
    }
    fclose(f);
    printf("ovs_vectors: %d vectors, %d mismatches\n", n, bad);
    ck_assert_int_gt(n, 1000);
    ck_assert_int_eq(bad, 0);
}
END_TEST

/* tun_metadata through a TLV map: the map's lengths on the wire, and
 * ovs-ofctl's shorter values right-aligned. */
START_TEST(tun_metadata_with_map)
{
    struct fdp_tlv_map *map;
    char *err = NULL;

    ck_assert_int_eq(fdp_tlv_map_create(&map), 0);
    ck_assert_int_eq(fdp_tlv_map_add(map,
                                     "{class=0xffff,type=0,len=4}->"
                                     "tun_metadata0,{class=0xffff,type=1,"
                                     "len=8}->tun_metadata1", &err), 0);
    fdp_tlv_map_use_for_text(map);
    struct fdp_match *m = parse_match("tun_metadata1=0x5/0xff,"
                                      "tun_metadata0=0x1234,actions=drop");
    struct fdp__ofpbuf b;
    fdp__ofpbuf_init(&b);
    int len = fdp__nx_match_put(&b, m, false, FDP_OFP10, map);
    uint8_t want[64];
    size_t want_len = unhex("00015004 00001234"
                            "00015310 0000000000000005 00000000000000ff",
                            want, sizeof want);
    ck_assert_int_eq(len, (int) want_len);
    ck_assert(!memcmp(b.data, want, want_len));

    struct fdp_match back;
    struct fdp__ofp_reader r;
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, b.data, b.size);
    ck_assert_int_eq(fdp__nx_match_pull(&r, b.size, map, &back), 0);
    ck_assert(fdp_match_equal(&back, m));

    /* As ovs-ofctl sends it without the switch's map: 2 and 1 bytes. */
    want_len = unhex("00015002 1234 00015302 05 ff", want, sizeof want);
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, want, want_len);
    ck_assert_int_eq(fdp__nx_match_pull(&r, want_len, map, &back), 0);
    ck_assert(fdp_match_equal(&back, m));

    /* Too long for the option; unmapped; no map; twice. */
    want_len = unhex("00015006 010000001234", want, sizeof want);
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, want, want_len);
    ck_assert_int_eq(fdp__nx_match_pull(&r, want_len, map, &back),
                     FDP_OFPBMC_BAD_VALUE);
    want_len = unhex("00015404 00001234", want, sizeof want);
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, want, want_len);
    ck_assert_int_eq(fdp__nx_match_pull(&r, want_len, map, &back),
                     FDP_OFPBMC_BAD_FIELD);
    want_len = unhex("00015004 00001234", want, sizeof want);
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, want, want_len);
    ck_assert_int_eq(fdp__nx_match_pull(&r, want_len, NULL, &back),
                     FDP_OFPBMC_BAD_FIELD);
    want_len = unhex("00015004 00001234 00015004 00001234", want,
                     sizeof want);
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, want, want_len);
    ck_assert_int_eq(fdp__nx_match_pull(&r, want_len, map, &back),
                     FDP_OFPBMC_DUP_FIELD);

    /* Without a map the match has no wire form. */
    fdp__ofpbuf_uninit(&b);
    fdp__ofpbuf_init(&b);
    ck_assert_int_eq(fdp__nx_match_put(&b, m, false, FDP_OFP10, NULL), -1);
    ck_assert_uint_eq(b.size, 0);

    fdp_tlv_map_use_for_text(NULL);
    fdp__ofpbuf_uninit(&b);
    fdp_match_destroy(m);
    fdp_tlv_map_destroy(map);
}
END_TEST

/* Matches with no wire form: nothing appended, -1. */
START_TEST(no_wire_form)
{
    static const struct {
        const char *flow;
        bool nxm, oxm, of10;        /* Which encodings exist. */
    } cases[] = {
        { "tcp,tp_dst=1-1000,actions=drop", false, false, false },
        { "tun_tos=4,actions=drop", false, false, false },
        { "tun_ttl=4,actions=drop", false, false, false },
        /* OXM has no PCP without a VID: left out, as Open vSwitch does. */
        { "vlan_tci=0x2000/0xe000,actions=drop", true, true, false },
        { "vlan_tci=0x1000/0x1100,actions=drop", true, true, false },
        { "reg0=1,actions=drop", true, true, false },
        { "dl_src=00:00:00:00:00:01/00:00:00:00:00:ff,actions=drop", true,
          true, false },
        { "ip,nw_src=10.0.0.1/255.0.255.0,actions=drop", true, true, false },
        { "ip,nw_ecn=1,actions=drop", true, true, false },
        { "tcp,nw_src=10.0.0.0/8,tp_dst=80,actions=drop", true, true, true },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fdp_match *m = parse_match(cases[i].flow);
        struct fdp__ofpbuf b;
        uint8_t w[FDP_OFP10_MATCH_LEN];

        fdp__ofpbuf_init(&b);
        fdp__ofpbuf_put_u8(&b, 0xaa);
        int r = fdp__nx_match_put(&b, m, false, FDP_OFP10, NULL);
        ck_assert_msg((r >= 0) == cases[i].nxm, "%s: nxm %d", cases[i].flow,
                      r);
        if (r < 0) {
            ck_assert_uint_eq(b.size, 1);
        }
        r = fdp__ofp11_match_put(&b, m, FDP_OFP13, NULL);
        ck_assert_msg((r >= 0) == cases[i].oxm, "%s: oxm %d", cases[i].flow,
                      r);
        r = fdp__ofp10_match_encode(m, w);
        ck_assert_msg((r >= 0) == cases[i].of10, "%s: of10 %d",
                      cases[i].flow, r);
        fdp__ofpbuf_uninit(&b);
        fdp_match_destroy(m);
    }
}
END_TEST

/* OpenFlow 1.0: fields whose prerequisites the match does not meet are
 * dropped (ofputil_normalize_match()), and the VLAN forms. */
START_TEST(ofp10_decode)
{
    static const struct {
        const char *hex;
        const char *text;
    } cases[] = {
        /* Everything wildcarded but nw_src/24 and tp_dst, without dl_type:
         * both dropped. */
        { "0038087f 0000 000000000000 000000000000 0000 00 00 0000 00 00 0000"
          "0a000001 00000000 0000 0050", "" },
        /* With dl_type 0x0800 and nw_proto 6 they stay. */
        { "0038084f 0000 000000000000 000000000000 0000 00 00 0800 00 06 0000"
          "0a000000 00000000 0000 0050", "tcp,nw_src=10.0.0.0/24,tp_dst=80" },
        /* ARP: nw_proto is the opcode, nw_src the sender's address. */
        { "003800cf 0000 000000000000 000000000000 0000 00 00 0806 00 02 0000"
          "0a000001 00000000 0000 0000", "arp,arp_spa=10.0.0.1,arp_op=2" },
        /* dl_vlan 0xffff: no tag, whatever the PCP says. */
        { "002820fd 0000 000000000000 000000000000 ffff 05 00 0000 00 00 0000"
          "00000000 00000000 0000 0000", "vlan_tci=0x0000" },
        /* A VID and a PCP. */
        { "002820fd 0000 000000000000 000000000000 0005 03 00 0000 00 00 0000"
          "00000000 00000000 0000 0000", "dl_vlan=5,dl_vlan_pcp=3" },
        /* nw_tos keeps the DSCP bits only. */
        { "001820ef 0000 000000000000 000000000000 0000 00 00 0800 ff 00 0000"
          "00000000 00000000 0000 0000", "ip,nw_tos=252" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t w[FDP_OFP10_MATCH_LEN];
        struct fdp_match m;

        ck_assert_uint_eq(unhex(cases[i].hex, w, sizeof w),
                          FDP_OFP10_MATCH_LEN);
        fdp__match_init(&m);
        ck_assert_int_eq(fdp__ofp10_match_decode(w, &m), 0);
        char *t = match_text(&m);
        ck_assert_msg(!strcmp(t, cases[i].text), "%s: %s, expected %s",
                      cases[i].hex, t, cases[i].text);
        free(t);
    }
}
END_TEST

/* The cookie entry of NXT_FLOW_MOD and NXST_FLOW requests. */
START_TEST(cookie_entries)
{
    struct fdp_match *m = parse_match("reg0=1,actions=drop");
    struct fdp__ofpbuf b;
    uint64_t cookie, cookie_mask;

    fdp__ofpbuf_init(&b);
    int len = fdp__nx_match_put_cookie(&b, m, NULL, 0x1234, 0xff00);
    uint8_t want[64];
    size_t want_len = unhex("00010004 00000001 00013d10 0000000000001200"
                            "000000000000ff00", want, sizeof want);
    ck_assert_int_eq(len, (int) want_len);
    ck_assert(!memcmp(b.data, want, want_len));

    struct fdp_match back;
    struct fdp__ofp_reader r;
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, b.data, b.size);
    ck_assert_int_eq(fdp__nx_match_pull_cookie(&r, b.size, NULL, &back,
                                               &cookie, &cookie_mask), 0);
    ck_assert(fdp_match_equal(&back, m));
    ck_assert_uint_eq(cookie, 0x1200);
    ck_assert_uint_eq(cookie_mask, 0xff00);

    /* Not allowed without the cookie's pointers. */
    fdp__match_init(&back);
    fdp__ofp_reader_init(&r, b.data, b.size);
    ck_assert_int_eq(fdp__nx_match_pull(&r, b.size, NULL, &back),
                     FDP_OFPBMC_BAD_FIELD);
    fdp__ofpbuf_uninit(&b);
    fdp_match_destroy(m);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Hostile input.                                                           */

/* Entries Open vSwitch rejects, with its error ("ovs-ofctl --strict
 * parse-oxm OpenFlow13" for the ones it can spell) or accepts. */
START_TEST(bad_entries)
{
    static const struct {
        const char *hex;
        int error;
    } cases[] = {
        /* OXM_OF_TCP_SRC without its prerequisites. */
        { "80001a02 0050", FDP_OFPBMC_BAD_PREREQ },
        /* OXM_OF_IP_DSCP(0x40): more than 6 bits. */
        { "80000a02 0800 80001001 40", FDP_OFPBMC_BAD_VALUE },
        /* OXM_OF_VLAN_PCP without a VID, or with a VID not present. */
        { "80000e01 03", FDP_OFPBMC_BAD_PREREQ },
        { "80000c02 0005 80000e01 03", FDP_OFPBMC_BAD_PREREQ },
        { "80000c02 1005 80000e01 03", 0 },
        /* OXM_OF_IN_PORT: 0xfffffeff is no port, 0xfffffffe LOCAL. */
        { "80000004 fffffeff", FDP_OFPBMC_BAD_VALUE },
        { "80000004 fffffffe", 0 },
        /* OXM_OF_ARP_OP above 255. */
        { "80000a02 0806 80002a02 0102", FDP_OFPBMC_BAD_VALUE },
        /* NXM_NX_CT_STATE with an unknown bit. */
        { "0001d204 00000100", FDP_OFPBMC_BAD_VALUE },
        /* NXM_NX_REG0 then OXM_OF_PKT_REG0, which covers it. */
        { "00010004 00000001 80010008 0000000100000000",
          FDP_OFPBMC_DUP_FIELD },
        /* NXM_NX_IP_FRAG(4). */
        { "80000a02 0800 00013401 04", FDP_OFPBMC_BAD_VALUE },
        /* NXM_NX_TUN_FLAGS(2): only oam. */
        { "0001d002 0002", FDP_OFPBMC_BAD_VALUE },
        /* NXM_OF_IP_TOS with ECN bits. */
        { "80000a02 0800 00000a01 fd", FDP_OFPBMC_BAD_VALUE },
        { "80000a02 0800 00000a01 fc", 0 },
        /* A value bit under a 0 mask bit. */
        { "8000090c 010000000000 000000000000", FDP_OFPBMC_BAD_WILDCARDS },
        /* A later fragment has no TCP ports. */
        { "80000a02 0800 00013401 03 80001401 06 80001a02 0050",
          FDP_OFPBMC_BAD_PREREQ },
        /* ND link-layer addresses follow the ICMPv6 type. */
        { "80000a02 86dd 80001401 3a 80003a01 87 80004006 001122334455", 0 },
        { "80000a02 86dd 80001401 3a 80003a01 88 80004006 001122334455",
          FDP_OFPBMC_BAD_PREREQ },
        /* The same field twice; a zero mask first is no match at all. */
        { "80000a02 0800 80000a02 0800", FDP_OFPBMC_DUP_FIELD },
        { "0001d308 00000000 00000000 0001d204 00000020", 0 },
        /* A mask on a field that takes none: all ones or zeros only. */
        { "80000a02 0800 80001502 06 0f", FDP_OFPBMC_BAD_MASK },
        { "80000a02 0800 80001502 06 ff", 0 },
        /* Truncated or malformed entries. */
        { "8000", FDP_OFPBMC_BAD_LEN },
        { "80000a02 08", FDP_OFPBMC_BAD_LEN },
        { "80000a03 080000", FDP_OFPBMC_BAD_FIELD },
        { "8000fe02 0800", FDP_OFPBMC_BAD_FIELD },
        { "ffff5406 4f4e", FDP_OFPBMC_BAD_LEN },
        { "ffff5402 4f4e4600", FDP_OFPBMC_BAD_LEN },
        { "ffff5406 12345678 0002", FDP_OFPBMC_BAD_FIELD },
        /* ONF's tcp_flags, in OpenFlow 1.3. */
        { "80000a02 0800 80001401 06 ffff5406 4f4e4600 0002", 0 },
        /* Two tunnel address families (Open vSwitch accepts this match,
         * which nothing matches; flowdp's key has one family). */
        { "00013e04 01020304 0001da10 20010db8000000000000000000000001",
          FDP_OFPBMC_DUP_FIELD },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[128];
        size_t n = unhex(cases[i].hex, buf, sizeof buf);
        struct fdp_match m;
        struct fdp__ofp_reader r;

        fdp__match_init(&m);
        fdp__ofp_reader_init(&r, buf, n);
        int error = fdp__nx_match_pull(&r, n, NULL, &m);
        ck_assert_msg(error == cases[i].error, "%s: %s, expected %s",
                      cases[i].hex, err_name(error),
                      err_name(cases[i].error));
    }

    /* OpenFlow 1.1+'s ofp_match header. */
    static const struct {
        const char *hex;
        int error;
    } oxm[] = {
        { "00010004 00000000", 0 },
        { "0000000c 00000000 00000000", FDP_OFPBMC_BAD_TYPE },
        { "00010003 00000000", FDP_OFPBMC_BAD_LEN },
        { "0001000a 80000a02 0800", FDP_OFPBMC_BAD_LEN },
        { "0001", FDP_OFPBMC_BAD_LEN },
        { "0001000a 80000a02 0800 000000000000", 0 },
    };
    for (size_t i = 0; i < sizeof oxm / sizeof oxm[0]; i++) {
        uint8_t buf[64];
        size_t n = unhex(oxm[i].hex, buf, sizeof buf);
        struct fdp_match m;
        struct fdp__ofp_reader r;

        fdp__match_init(&m);
        fdp__ofp_reader_init(&r, buf, n);
        int error = fdp__ofp11_match_pull(&r, NULL, &m);
        ck_assert_msg(error == oxm[i].error, "%s: %s, expected %s",
                      oxm[i].hex, err_name(error), err_name(oxm[i].error));
    }
}
END_TEST

/* If 'buf' decodes in 'fmt', its re-encoding (if it has one) decodes to
 * the same match. */
static void
check_decoded(const char *fmt, const uint8_t *buf, size_t n, uint64_t round)
{
    struct fdp_match m;
    int error;

    fdp__match_init(&m);
    error = decode(fmt, buf, n, &m);
    ck_assert_msg(error == 0 || is_ofperr(error), "round %" PRIu64 ": %s: %s",
                  round, fmt, err_name(error));
    if (error) {
        return;
    }

    struct fdp__ofpbuf b;
    fdp__ofpbuf_init(&b);
    int len = encode(fmt, &m, &b);
    if (len >= 0) {
        struct fdp_match back;
        fdp__match_init(&back);
        error = decode(fmt, b.data, (size_t) len, &back);
        if (error || !fdp_match_equal(&back, &m)) {
            char *in = tohex(buf, n), *out = tohex(b.data, (size_t) len);
            ck_abort_msg("round %" PRIu64 ": %s %s re-encoded as %s: %s",
                         round, fmt, in, out, err_name(error));
        }
    }
    fdp__ofpbuf_uninit(&b);
}

START_TEST(random_bytes)
{
    struct unit_rng rng;

    unit_rng_init(&rng, 2);
    for (uint64_t round = 0; round < 200000; round++) {
        uint8_t buf[96];
        size_t n = unit_rng_below(&rng, sizeof buf + 1);
        for (size_t i = 0; i < n; i++) {
            buf[i] = (uint8_t) unit_rng_next(&rng);
        }
        /* Make headers look like real ones often enough to get past the
         * first checks: a known class, a plausible length. */
        if (n >= 4 && unit_rng_below(&rng, 2)) {
            static const uint16_t classes[] = { 0, 1, 0x8000, 0x8001,
                                                0xffff, 0x1000 };
            fdp__ofp_set_be16(buf, classes[unit_rng_below(&rng, 6)]);
            buf[3] = (uint8_t) unit_rng_below(&rng, 40);
        }
        check_decoded("nxm", buf, n, round);
        if (n >= FDP_OFP10_MATCH_LEN) {
            check_decoded("of10", buf, FDP_OFP10_MATCH_LEN, round);
        }
        if (n >= 4) {
            buf[0] = 0;
            buf[1] = 1;
            check_decoded("oxm13", buf, n, round);
        }
    }
}
END_TEST

START_TEST(mutated_vectors)
{
    FILE *f = fopen(FDP_OFP_MATCH_VECTORS, "r");
    struct unit_rng rng;
    char line[4096];
    uint64_t round = 0;

    ck_assert(f != NULL);
    unit_rng_init(&rng, 3);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') {
            continue;
        }
        /* FORMAT, FLOW, HEX, DECODED. */
        char *fmt = line;
        char *flow = strchr(fmt, '\t');
        ck_assert(flow != NULL);
        *flow++ = '\0';
        char *hex = strchr(flow, '\t');
        ck_assert(hex != NULL);
        *hex++ = '\0';
        char *tail = strchr(hex, '\t');
        if (tail) {
            *tail = '\0';
        }
        uint8_t orig[1024], buf[1024];
        size_t n = unhex(hex, orig, sizeof orig);
        for (int k = 0; k < 40; k++, round++) {
            size_t len = n;
            memcpy(buf, orig, n);
            unsigned int flips = 1 + unit_rng_below(&rng, 3);
            for (unsigned int j = 0; j < flips && n; j++) {
                buf[unit_rng_below(&rng, (uint32_t) n)]
                    ^= (uint8_t) (1u << unit_rng_below(&rng, 8));
            }
            if (unit_rng_below(&rng, 4) == 0 && n) {
                len = unit_rng_below(&rng, (uint32_t) n);
            }
            if (!strcmp(fmt, "of10")) {
                len = FDP_OFP10_MATCH_LEN;
            }
            check_decoded(fmt, buf, len, round);
        }
    }
    fclose(f);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("ofp-match");
    TCase *tc = unit_tcase(s, "fields");

    tcase_add_test(tc, rows_found_by_header_and_name);
    tcase_add_test(tc, known_headers);
    tcase_add_test(tc, agrees_with_action_names);
    tcase_add_test(tc, values_round_trip);

    tc = unit_tcase(s, "matches");
    tcase_add_test(tc, ovs_vectors);
    tcase_add_test(tc, tun_metadata_with_map);
    tcase_add_test(tc, no_wire_form);
    tcase_add_test(tc, cookie_entries);
    tcase_add_test(tc, ofp10_decode);

    tc = unit_tcase(s, "hostile");
    tcase_add_test(tc, bad_entries);
    tcase_add_test(tc, random_bytes);
    tcase_add_test(tc, mutated_vectors);
    return unit_run(s);
}
