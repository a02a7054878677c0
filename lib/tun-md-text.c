/*
 * tun_metadata0..tun_metadata63 in the flow text syntax.
 *
 * A tun_metadataN match names bytes of the key's tunnel-metadata space
 * (key.h, words 37-40) that a TLV map (lib/tlv-map.c) gave option N, and
 * the presence bit of the option's first slot: "tun_metadata0=0x1234"
 * under {class=0xffff,type=0,len=4}->tun_metadata0 matches bytes 0-3 of
 * the space against 00 00 12 34 and presence bit 0 against 1, so a packet
 * without the option (whose bytes are zero too) does not match
 * "tun_metadata0=0", as in Open vSwitch.
 *
 * Which map: the one this thread named with fdp_tlv_map_use_for_text()
 * (flowdpd names its pipeline's, so that flows are parsed and printed
 * with the map the datapath fills keys with).  With none, as ovs-ofctl
 * parse-flows without a switch, each flow lays its tun_metadata fields
 * out itself, in the order written, each taking as many bytes as its
 * value or mask needs (Open vSwitch's mf_field_len()), rounded up to
 * whole 4-byte slots (the value right-aligned in them); the layout of the
 * last flow parsed on the thread is what the formatter reads, so a tool
 * that parses and prints one flow at a time (parse-flows) prints what it
 * parsed, as ovs-ofctl does.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/flow-text.h"
#include "lib/tlv-map.h"

/* The thread's map, and the layout of its last flow parsed without one. */
static __thread const struct fdp_tlv_map *text_map;
static __thread struct {
    uint64_t set;                       /* Bit N: tun_metadataN laid out. */
    uint64_t masked;                    /* Bit N: it was written masked. */
    uint8_t offset[FDP_TLV_MAP_FIELDS]; /* Of its slots. */
    uint8_t alen[FDP_TLV_MAP_FIELDS];   /* Bytes of its slots. */
    uint8_t len[FDP_TLV_MAP_FIELDS];    /* Bytes Open vSwitch gives it. */
    unsigned int used;                  /* Bytes laid out. */
} adhoc;

void
fdp_tlv_map_use_for_text(const struct fdp_tlv_map *map)
{
    text_map = map;
}

void
fdp__tun_md_text_begin(void)
{
    adhoc.set = adhoc.masked = 0;
    adhoc.used = 0;
}

/* Parses a value of at most 32 bytes into 'bytes' (big-endian, right-
 * aligned in 32 bytes): "0x" and hex digits, or a decimal number of at
 * most 64 bits, as ovs-ofctl reads one.  Sets '*n' to the bytes from the
 * first non-zero one (Open vSwitch's field_len()). */
static bool
parse_bytes(const char *s, uint8_t bytes[FDP__TUN_MD_BYTES], unsigned int *n)
{
    memset(bytes, 0, FDP__TUN_MD_BYTES);
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        const char *h = s + 2;
        size_t nd = strlen(h);
        if (!nd || nd > 2 * FDP__TUN_MD_BYTES) {
            /* Leading zeros beyond 32 bytes are still fine. */
            while (nd > 2 * FDP__TUN_MD_BYTES && *h == '0') {
                h++;
                nd--;
            }
            if (!nd || nd > 2 * FDP__TUN_MD_BYTES) {
                return false;
            }
        }
        for (size_t i = 0; i < nd; i++) {
            int c = h[nd - 1 - i];
            if (!isxdigit(c)) {
                return false;
            }
            unsigned int d = (unsigned int) (isdigit(c) ? c - '0'
                                             : tolower(c) - 'a' + 10);
            bytes[FDP__TUN_MD_BYTES - 1 - i / 2] |= (uint8_t) (d << (4 * (i % 2)));
        }
    } else {
        char *end;
        if (!isdigit((unsigned char) *s)) {
            return false;
        }
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end) {
            return false;
        }
        for (int i = 0; i < 8; i++) {
            bytes[FDP__TUN_MD_BYTES - 1 - i] = (uint8_t) (v >> (8 * i));
        }
    }
    unsigned int i = 0;
    while (i < FDP__TUN_MD_BYTES && !bytes[i]) {
        i++;
    }
    *n = FDP__TUN_MD_BYTES - i;
    return true;
}

static void
put_byte(struct fdp_key *k, unsigned int b, uint8_t v)
{
    uint64_t *w = &k->w[FDP__TUN_MD_WORD + b / 8];
    unsigned int sh = (7 - b % 8) * 8;

    *w = (*w & ~((uint64_t) 0xff << sh)) | (uint64_t) v << sh;
}

static uint8_t
get_byte(const struct fdp_key *k, unsigned int b)
{
    return (uint8_t) (k->w[FDP__TUN_MD_WORD + b / 8] >> ((7 - b % 8) * 8));
}

static char *
msgf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
msgf(const char *fmt, ...)
{
    char *s;
    va_list args;

    va_start(args, fmt);
    if (vasprintf(&s, fmt, args) < 0) {
        s = NULL;
    }
    va_end(args);
    return s;
}

/* The index N of "tun_metadataN", or -1. */
int
fdp__tun_md_index(const char *name)
{
    static const char prefix[] = "tun_metadata";
    size_t n = sizeof prefix - 1;

    if (strncmp(name, prefix, n) || !isdigit((unsigned char) name[n])
        || (name[n] == '0' && name[n + 1])) {
        return -1;
    }
    char *end;
    unsigned long idx = strtoul(name + n, &end, 10);
    return *end || idx >= FDP_TLV_MAP_FIELDS ? -1 : (int) idx;
}

/* Where tun_metadata'idx' lives for a flow being parsed: from the map, or
 * laid out now (no map).  'need' is the bytes its value or mask takes. */
static char *
locate(int idx, unsigned int need, unsigned int *offset, unsigned int *alen,
       unsigned int *len)
{
    if (text_map) {
        if (!fdp__tlv_map_field(text_map, (unsigned int) idx, offset, alen)) {
            return msgf("tun_metadata%d: not mapped to any option (map it "
                        "with add-tlv-map {class=...,type=...,len=...}->"
                        "tun_metadata%d)", idx, idx);
        }
        *len = *alen;
        if (need > *alen) {
            return msgf("tun_metadata%d: value too large for its %u-byte "
                        "option", idx, *alen);
        }
        return NULL;
    }
    if (adhoc.set & (UINT64_C(1) << idx)) {
        return msgf("tun_metadata%d: set multiple times", idx);
    }
    unsigned int a = need ? (need + 3) / 4 * 4 : 4;
    if (adhoc.used + a > FDP__TUN_MD_BYTES) {
        return msgf("tun_metadata%d: the flow's tun_metadata fields need %u "
                    "bytes; the space is %d", idx, adhoc.used + a,
                    FDP__TUN_MD_BYTES);
    }
    adhoc.set |= UINT64_C(1) << idx;
    adhoc.offset[idx] = (uint8_t) adhoc.used;
    adhoc.alen[idx] = (uint8_t) a;
    adhoc.len[idx] = (uint8_t) need;
    *offset = adhoc.used;
    *alen = a;
    *len = need;
    adhoc.used += a;
    return NULL;
}

char *
fdp__tun_md_parse(struct fdp_match *m, int idx, char *text)
{
    uint8_t v[FDP__TUN_MD_BYTES], mk[FDP__TUN_MD_BYTES];
    unsigned int nv, nm = FDP__TUN_MD_BYTES;
    char *slash = strchr(text, '/');
    bool masked = slash != NULL;

    if (slash) {
        *slash = '\0';
    }
    bool ok = parse_bytes(text, v, &nv);
    if (ok && slash) {
        ok = parse_bytes(slash + 1, mk, &nm);
    } else {
        memset(mk, 0xff, sizeof mk);
    }
    if (slash) {
        *slash = '/';
    }
    if (!ok) {
        return msgf("tun_metadata%d: \"%s\" is not a value of at most %d "
                    "bytes (0x and hex digits, or a decimal number)", idx,
                    text, FDP__TUN_MD_BYTES);
    }
    for (unsigned int i = 0; i < FDP__TUN_MD_BYTES; i++) {
        v[i] &= mk[i];
    }
    /* Open vSwitch's mf_field_len() on the masked value: the value's
     * bytes, or the mask's if more and the mask is not all ones. */
    unsigned int i = 0;
    while (i < FDP__TUN_MD_BYTES && !v[i]) {
        i++;
    }
    nv = FDP__TUN_MD_BYTES - i;
    unsigned int need = masked && nm > nv ? nm : nv;

    unsigned int offset = 0, alen = 0, len = 0;
    char *msg = locate(idx, text_map ? nv : need, &offset, &alen, &len);
    if (msg) {
        return msg;
    }
    if (!text_map && masked) {
        adhoc.masked |= UINT64_C(1) << idx;
    }
    uint64_t present = (uint64_t) 1 << (FDP__TUN_MD_PRESENT_SHIFT
                                        + offset / 4);
    if (m->mask.w[FDP__TUN_MD_PRESENT_WORD] & present) {
        return msgf("tun_metadata%d: set multiple times", idx);
    }
    m->mask.w[FDP__TUN_MD_PRESENT_WORD] |= present;
    m->value.w[FDP__TUN_MD_PRESENT_WORD] |= present;
    for (unsigned int b = 0; b < alen; b++) {
        unsigned int src = FDP__TUN_MD_BYTES - alen + b;
        put_byte(&m->value, offset + b, v[src]);
        put_byte(&m->mask, offset + b, b < alen - len ? 0 : mk[src]);
    }
    return NULL;
}

/* The tun_metadata field whose first slot is 'slot', under the thread's
 * map or its last flow's layout: its index, offset and the bytes to
 * print, or -1. */
static int
field_at(unsigned int slot, unsigned int *offset, unsigned int *alen,
         unsigned int *len, bool *masked)
{
    *masked = false;
    for (int idx = 0; idx < FDP_TLV_MAP_FIELDS; idx++) {
        if (text_map) {
            if (fdp__tlv_map_field(text_map, (unsigned int) idx, offset, alen)
                && *offset == slot * 4) {
                *len = *alen;
                return idx;
            }
        } else if ((adhoc.set & (UINT64_C(1) << idx))
                   && adhoc.offset[idx] == slot * 4) {
            *offset = adhoc.offset[idx];
            *alen = adhoc.alen[idx];
            *len = adhoc.len[idx];
            *masked = (adhoc.masked >> idx) & 1;
            return idx;
        }
    }
    return -1;
}

/* 'n' bytes as Open vSwitch's ds_put_hex(): "0x" and the digits without
 * leading zeros, "0" for none. */
static void
put_hex(struct fdp__ds *ds, const uint8_t *b, unsigned int n)
{
    unsigned int i = 0;

    while (i < n && !b[i]) {
        i++;
    }
    if (i == n) {
        fdp__ds_putc(ds, '0');
        return;
    }
    fdp__ds_printf(ds, "0x%x", b[i]);
    for (i++; i < n; i++) {
        fdp__ds_printf(ds, "%02x", b[i]);
    }
}

void
fdp__tun_md_format(struct fdp__ds *ds, const struct fdp_match *m)
{
    uint64_t present = (m->mask.w[FDP__TUN_MD_PRESENT_WORD]
                        >> FDP__TUN_MD_PRESENT_SHIFT) & 0xff;
    struct {
        int idx;
        unsigned int offset, alen, len;
        bool masked;
    } found[FDP__TUN_MD_SLOTS];
    unsigned int n = 0;

    for (unsigned int slot = 0; slot < FDP__TUN_MD_SLOTS; slot++) {
        unsigned int offset = 0, alen = 0, len = 0;
        bool masked;
        int idx;
        if ((present >> slot) & 1
            && (idx = field_at(slot, &offset, &alen, &len, &masked)) >= 0) {
            found[n].masked = masked;
            found[n].idx = idx;
            found[n].offset = offset;
            found[n].alen = alen;
            found[n++].len = len;
        }
    }
    /* In index order, as match_format() prints them. */
    for (unsigned int i = 1; i < n; i++) {
        for (unsigned int j = i; j > 0 && found[j - 1].idx > found[j].idx;
             j--) {
            __typeof__(found[0]) t = found[j];
            found[j] = found[j - 1];
            found[j - 1] = t;
        }
    }
    for (unsigned int i = 0; i < n; i++) {
        uint8_t v[FDP__TUN_MD_BYTES], mk[FDP__TUN_MD_BYTES];
        unsigned int skip = found[i].alen - found[i].len;
        bool zero = true, ones = true;
        for (unsigned int b = 0; b < found[i].len; b++) {
            v[b] = get_byte(&m->value, found[i].offset + skip + b);
            mk[b] = get_byte(&m->mask, found[i].offset + skip + b);
            zero &= !mk[b];
            ones &= mk[b] == 0xff;
        }
        /* Open vSwitch prints a bare name for a masked field whose mask
         * is zero (a match on the option's presence alone); with a map,
         * "masked" means a mask that is not all ones. */
        bool masked = text_map ? !ones : found[i].masked;
        fdp__ds_printf(ds, "tun_metadata%d", found[i].idx);
        if (!(masked && zero)) {
            fdp__ds_putc(ds, '=');
            put_hex(ds, v, found[i].len);
            if (!ones) {
                fdp__ds_putc(ds, '/');
                put_hex(ds, mk, found[i].len);
            }
        }
        fdp__ds_putc(ds, ',');
    }
}
