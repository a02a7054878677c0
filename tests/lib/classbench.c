/*
 * ClassBench rule and trace lines: see classbench.h.
 */
#include <config.h>

#include "tests/lib/classbench.h"

#include <stdio.h>
#include <string.h>

/* An IPv4 prefix length as a mask. */
static uint32_t
prefix_mask(unsigned int len)
{
    return len ? (uint32_t) (0xffffffffull << (32 - len)) : 0;
}

static struct fdp_value
value(uint64_t v)
{
    return (struct fdp_value) { 0, v };
}

bool
classbench_parse_rule(const char *line, struct fdp_match *m)
{
    unsigned int s[4], slen, d[4], dlen, splo, sphi, dplo, dphi, proto, pmask;

    if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u "
               "%x/%x", &s[0], &s[1], &s[2], &s[3], &slen, &d[0], &d[1],
               &d[2], &d[3], &dlen, &splo, &sphi, &dplo, &dphi, &proto,
               &pmask) != 16
        || slen > 32 || dlen > 32 || splo > sphi || sphi > 0xffff
        || dplo > dphi || dphi > 0xffff || proto > 0xff || pmask > 0xff) {
        return false;
    }
    uint32_t src = s[0] << 24 | s[1] << 16 | s[2] << 8 | s[3];
    uint32_t dst = d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
    uint32_t smask = prefix_mask(slen), dmask = prefix_mask(dlen);
    return !fdp_match_set_masked(m, FDP_F_DL_TYPE, value(0x0800),
                                 value(0xffff))
           && !fdp_match_set_masked(m, FDP_F_NW_SRC, value(src & smask),
                                    value(smask))
           && !fdp_match_set_masked(m, FDP_F_NW_DST, value(dst & dmask),
                                    value(dmask))
           && !fdp_match_set_range(m, FDP_F_TP_SRC, value(splo),
                                   value(sphi))
           && !fdp_match_set_range(m, FDP_F_TP_DST, value(dplo),
                                   value(dphi))
           && !fdp_match_set_masked(m, FDP_F_NW_PROTO, value(proto & pmask),
                                    value(pmask));
}

void
classbench_key(struct fdp_key *key, uint32_t src, uint32_t dst,
               uint32_t sport, uint32_t dport, uint32_t proto)
{
    memset(key, 0, sizeof *key);
    fdp_key_set(key, FDP_F_DL_TYPE, value(0x0800));
    fdp_key_set(key, FDP_F_NW_SRC, value(src));
    fdp_key_set(key, FDP_F_NW_DST, value(dst));
    fdp_key_set(key, FDP_F_TP_SRC, value(sport));
    fdp_key_set(key, FDP_F_TP_DST, value(dport));
    fdp_key_set(key, FDP_F_NW_PROTO, value(proto));
}

bool
classbench_parse_header(const char *line, struct fdp_key *key)
{
    unsigned long src, dst, sport, dport, proto;

    if (sscanf(line, "%lu %lu %lu %lu %lu", &src, &dst, &sport, &dport,
               &proto) != 5 || src > UINT32_MAX || dst > UINT32_MAX
        || sport > 0xffff || dport > 0xffff || proto > 0xff) {
        return false;
    }
    classbench_key(key, (uint32_t) src, (uint32_t) dst, (uint32_t) sport,
                   (uint32_t) dport, (uint32_t) proto);
    return true;
}

bool
classbench_rule_text(const char *line, unsigned int priority,
                     unsigned long long cookie, char *buf, size_t size)
{
    unsigned int s[4], slen, d[4], dlen, splo, sphi, dplo, dphi, proto, pmask;
    size_t n = 0;
    int k;

    if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u "
               "%x/%x", &s[0], &s[1], &s[2], &s[3], &slen, &d[0], &d[1],
               &d[2], &d[3], &dlen, &splo, &sphi, &dplo, &dphi, &proto,
               &pmask) != 16
        || slen > 32 || dlen > 32 || splo > sphi || sphi > 0xffff
        || dplo > dphi || dphi > 0xffff || proto > 0xff || pmask > 0xff
        || (pmask && pmask != 0xff)) {
        return false;
    }
#define APPEND(...)                                                     \
    k = snprintf(buf + n, size - n, __VA_ARGS__);                       \
    if (k < 0 || (size_t) k >= size - n) {                              \
        return false;                                                   \
    }                                                                   \
    n += (size_t) k;
    APPEND("priority=%u,cookie=%#llx,ip", priority, cookie);
    if (slen) {
        APPEND(",nw_src=%u.%u.%u.%u/%u", s[0], s[1], s[2], s[3], slen);
    }
    if (dlen) {
        APPEND(",nw_dst=%u.%u.%u.%u/%u", d[0], d[1], d[2], d[3], dlen);
    }
    if (pmask) {
        APPEND(",nw_proto=%u", proto);
    }
    if (splo != 0 || sphi != 0xffff) {
        if (splo == sphi) {
            APPEND(",tp_src=%u", splo);
        } else {
            APPEND(",tp_src=%u-%u", splo, sphi);
        }
    }
    if (dplo != 0 || dphi != 0xffff) {
        if (dplo == dphi) {
            APPEND(",tp_dst=%u", dplo);
        } else {
            APPEND(",tp_dst=%u-%u", dplo, dphi);
        }
    }
    APPEND(",actions=output:1");
#undef APPEND
    return true;
}
