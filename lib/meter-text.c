/*
 * Meters in ovs-ofctl's text: parsing a meter command's argument and
 * printing what dump-meters, meter-stats and meter-features print.
 *
 * The syntax is Open vSwitch's (parse_ofp_meter_mod_str() in its
 * lib/ofp-meter.c, "Meter Syntax" in ovs-ofctl(8)): keywords and
 * KEY=VALUE pairs separated by commas or white space; everything after
 * the first "band" is the band list, a "type=" starting each band.  The
 * checks are ovs-ofctl's (a band needs a rate; burst_size only with the
 * burst flag, and then always; prec_level only on a dscp_remark band, and
 * then always), and, where ovs-ofctl leaves the refusal to the switch,
 * flowdp's switch's too, said before anything is sent: kbps and pktps
 * together, more than FDP_METER_MAX_BANDS bands, meter=controller and
 * meter=slowpath (meters that flowdp does not have).  Every message names
 * the token at fault and its column.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/meter.h>
#include "lib/ds.h"

/* Longest meter text accepted: eight bands take under 400 bytes. */
#define MAX_METER_TEXT 4096

struct mparser {
    const char *text;           /* The caller's text, for columns. */
    char *buf;                  /* Our copy, cut into tokens. */
    char **errorp;
};

static int
merror(struct mparser *p, const char *at, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int
merror(struct mparser *p, const char *at, const char *format, ...)
{
    va_list args;
    char *msg = NULL;

    va_start(args, format);
    if (vasprintf(&msg, format, args) < 0) {
        msg = NULL;
    }
    va_end(args);
    if (p->errorp) {
        if (at && msg
            && asprintf(p->errorp, "column %d: %s", (int) (at - p->buf) + 1,
                        msg) < 0) {
            *p->errorp = NULL;
        } else if (!at) {
            *p->errorp = msg;
            msg = NULL;
        }
    }
    free(msg);
    return EINVAL;
}

/* The next token of '*s': a run of characters other than the separators
 * 'seps', skipping separators before it; NULL at the end. */
static char *
next_token(char **s, const char *seps)
{
    char *t = *s + strspn(*s, seps);

    if (!*t) {
        *s = t;
        return NULL;
    }
    char *end = t + strcspn(t, seps);
    if (*end) {
        *end++ = '\0';
    }
    *s = end;
    return t;
}

/* A 32-bit number as ovs-ofctl's str_to_u32() reads one: strtoul with
 * base 0, the whole token. */
static int
parse_u32(struct mparser *p, const char *name, const char *value,
          uint32_t *out)
{
    char *tail;

    errno = 0;
    unsigned long long v = strtoull(value, &tail, 0);
    if (!*value || *tail || errno || v > UINT32_MAX || value[0] == '-') {
        return merror(p, value, "%s: invalid numeric format %s", value,
                      value);
    }
    *out = (uint32_t) v;
    return 0;
}

static int
parse_meter_id(struct mparser *p, enum fdp_meter_command cmd,
               const char *value, uint32_t *id)
{
    if (!strcmp(value, "all")) {
        if (cmd == FDP_METER_CMD_ADD || cmd == FDP_METER_CMD_MOD) {
            return merror(p, value, "%s: meter=all names every meter, "
                          "which only del-meters, dump-meters and "
                          "meter-stats take", value);
        }
        *id = FDP_METER_ALL;
        return 0;
    }
    if (!strcmp(value, "controller") || !strcmp(value, "slowpath")) {
        return merror(p, value, "%s: flowdp has no %s meter", value,
                      value);
    }
    int error = parse_u32(p, "meter", value, id);
    if (!error && (!*id || *id > FDP_METER_MAX_ID)) {
        return merror(p, value, "%s: invalid value for meter", value);
    }
    return error;
}

/* Phase 2: the bands, from 'bands' (the text after "bands="). */
static int
parse_bands(struct mparser *p, char *s, struct fdp_meter_config *c)
{
    struct fdp_meter_band *band = NULL;
    const char *starts[FDP_METER_MAX_BANDS];
    char *name;

    while ((name = next_token(&s, "=, \t\r\n"))) {
        char *value = next_token(&s, ", \t\r\n");
        if (!value) {
            return merror(p, name, "%s: field %s missing value", name, name);
        }
        if (!strcmp(name, "type")) {
            if (c->n_bands == FDP_METER_MAX_BANDS) {
                return merror(p, name, "%s: more than %d bands", name,
                              FDP_METER_MAX_BANDS);
            }
            starts[c->n_bands] = name;
            band = &c->bands[c->n_bands++];
            if (!strcmp(value, "drop")) {
                band->type = FDP_METER_BAND_DROP;
            } else if (!strcmp(value, "dscp_remark")) {
                band->type = FDP_METER_BAND_DSCP_REMARK;
            } else {
                return merror(p, value, "%s: field type unknown value %s",
                              value, value);
            }
        } else if (!band) {
            return merror(p, name, "%s: band must start with the 'type' "
                          "keyword", name);
        } else if (!strcmp(name, "rate")) {
            int error = parse_u32(p, name, value, &band->rate);
            if (error) {
                return error;
            }
        } else if (!strcmp(name, "burst_size")) {
            int error = parse_u32(p, name, value, &band->burst_size);
            if (error) {
                return error;
            }
        } else if (!strcmp(name, "prec_level")) {
            uint32_t v;
            if (parse_u32(p, name, value, &v) || v > 255) {
                free(p->errorp ? *p->errorp : NULL);
                return merror(p, value, "%s: invalid prec_level \"%s\"",
                              value, value);
            }
            band->prec_level = (uint8_t) v;
        } else {
            return merror(p, name, "%s: unknown keyword %s", name, name);
        }
    }
    if (!c->n_bands) {
        return merror(p, NULL, "meter must have bands");
    }
    for (unsigned int i = 0; i < c->n_bands; i++) {
        const struct fdp_meter_band *b = &c->bands[i];
        const char *at = starts[i];
        if (b->type == FDP_METER_BAND_DSCP_REMARK && !b->prec_level) {
            return merror(p, at, "type: 'dscp_remark' band must have "
                          "'prec_level'");
        }
        if (b->type != FDP_METER_BAND_DSCP_REMARK && b->prec_level) {
            return merror(p, at, "type: Only 'dscp_remark' band may have "
                          "'prec_level'");
        }
        if (!b->rate) {
            return merror(p, at, "type: band must have 'rate'");
        }
        if (c->flags & FDP_METER_BURST && !b->burst_size) {
            return merror(p, at, "type: band must have 'burst_size' when "
                          "'burst' flag is set");
        }
        if (!(c->flags & FDP_METER_BURST) && b->burst_size) {
            return merror(p, at, "type: band may have 'burst_size' only "
                          "when 'burst' flag is set");
        }
    }
    return 0;
}

int
fdp_meter_parse(const char *text, enum fdp_meter_command cmd,
                struct fdp_meter_config *c, char **errorp)
{
    bool full = cmd == FDP_METER_CMD_ADD || cmd == FDP_METER_CMD_MOD;
    struct mparser p = { text, NULL, errorp };
    char *bands = NULL;
    int error = 0;

    if (errorp) {
        *errorp = NULL;
    }
    memset(c, 0, sizeof *c);
    if (strlen(text) > MAX_METER_TEXT) {
        return merror(&p, NULL, "meter text longer than %d bytes",
                      MAX_METER_TEXT);
    }
    p.buf = strdup(text);
    if (!p.buf) {
        return ENOMEM;
    }

    /* Phase 1: cut the bands off (ovs-ofctl looks for "band" anywhere, so
     * a misspelt keyword holding it is a band list too). */
    if (full) {
        char *b = strstr(p.buf, "band");
        char *eq = b ? strchr(b, '=') : NULL;
        if (!eq) {
            error = merror(&p, NULL, "must specify bands");
            goto out;
        }
        *b = '\0';
        bands = eq + 1;
    }

    /* Phase 2: the meter id and the flags. */
    char *s = p.buf, *name;
    bool have_id = false;
    while (!error && (name = next_token(&s, "=, \t\r\n"))) {
        static const struct {
            const char *name;
            uint16_t flag;
        } flags[] = {
            { "kbps", FDP_METER_KBPS }, { "pktps", FDP_METER_PKTPS },
            { "burst", FDP_METER_BURST }, { "stats", FDP_METER_STATS },
        };
        bool is_flag = false;
        for (size_t i = 0; full && i < sizeof flags / sizeof flags[0]; i++) {
            if (!strcmp(name, flags[i].name)) {
                c->flags |= flags[i].flag;
                is_flag = true;
            }
        }
        if (is_flag) {
            continue;
        }
        char *value = next_token(&s, ", \t\r\n");
        if (!value) {
            error = merror(&p, name, "%s: field %s missing value", name,
                           name);
        } else if (strcmp(name, "meter")) {
            error = merror(&p, name, "%s: unknown keyword %s", name, name);
        } else {
            error = parse_meter_id(&p, cmd, value, &c->id);
            have_id = true;
        }
    }
    if (error) {
        goto out;
    }
    if (!have_id) {
        if (!full) {
            c->id = FDP_METER_ALL;
            goto out;
        }
        error = merror(&p, NULL, "must specify 'meter'");
        goto out;
    }
    if (full) {
        if (!(c->flags & (FDP_METER_KBPS | FDP_METER_PKTPS))) {
            error = merror(&p, NULL, "meter must specify either 'kbps' or "
                           "'pktps'");
        } else if ((c->flags & FDP_METER_KBPS)
                   && (c->flags & FDP_METER_PKTPS)) {
            error = merror(&p, NULL, "meter must specify either 'kbps' or "
                           "'pktps', not both");
        } else {
            error = parse_bands(&p, bands, c);
        }
    }
out:
    free(p.buf);
    return error;
}

static void
format_band(struct fdp__ds *ds, uint16_t flags, const struct fdp_meter_band *b)
{
    fdp__ds_put(ds, "\ntype=");
    if (b->type == FDP_METER_BAND_DROP) {
        fdp__ds_put(ds, "drop");
    } else if (b->type == FDP_METER_BAND_DSCP_REMARK) {
        fdp__ds_put(ds, "dscp_remark");
    } else {
        fdp__ds_printf(ds, "%u", b->type);
    }
    fdp__ds_printf(ds, " rate=%" PRIu32, b->rate);
    if (flags & FDP_METER_BURST) {
        fdp__ds_printf(ds, " burst_size=%" PRIu32, b->burst_size);
    }
    if (b->type == FDP_METER_BAND_DSCP_REMARK) {
        fdp__ds_printf(ds, " prec_level=%u", b->prec_level);
    }
}

char *
fdp_meter_format_config(const struct fdp_meter_config *c)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_printf(&ds, "meter=%" PRIu32 " ", c->id);
    static const char *const names[] = { "kbps ", "pktps ", "burst ",
                                         "stats " };
    for (unsigned int i = 0; i < 4; i++) {
        if (c->flags & (1u << i)) {
            fdp__ds_put(&ds, names[i]);
        }
    }
    fdp__ds_put(&ds, "bands=");
    for (unsigned int i = 0; i < c->n_bands && i < FDP_METER_MAX_BANDS;
         i++) {
        format_band(&ds, c->flags, &c->bands[i]);
    }
    fdp__ds_putc(&ds, '\n');
    return fdp__ds_steal(&ds);
}

char *
fdp_meter_format_stats(const struct fdp_meter_stats *st)
{
    struct fdp__ds ds = FDP__DS_INIT;
    /* Open vSwitch keeps a meter's age in milliseconds and prints no
     * decimals for a whole second (ofp_print_duration()). */
    uint64_t ms = st->duration_ns / 1000000;

    fdp__ds_printf(&ds, "meter:%" PRIu32 " flow_count:%" PRIu32
                   " packet_in_count:%" PRIu64 " byte_in_count:%" PRIu64
                   " duration:%" PRIu64, st->id, st->flow_count,
                   st->packet_in_count, st->byte_in_count, ms / 1000);
    if (ms % 1000) {
        fdp__ds_printf(&ds, ".%03u", (unsigned int) (ms % 1000));
    }
    fdp__ds_put(&ds, "s bands:\n");
    for (unsigned int i = 0; i < st->n_bands && i < FDP_METER_MAX_BANDS;
         i++) {
        fdp__ds_printf(&ds, "%u: packet_count:%" PRIu64 " byte_count:%"
                       PRIu64 "\n", i, st->bands[i].packet_count,
                       st->bands[i].byte_count);
    }
    return fdp__ds_steal(&ds);
}

char *
fdp_meter_format_features(void)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_printf(&ds, "max_meter:%d max_bands:%d max_color:0\n"
                   "band_types: drop dscp_remark\n"
                   "capabilities: kbps pktps burst stats\n",
                   FDP_METER_MAX_METERS, FDP_METER_MAX_BANDS);
    return fdp__ds_steal(&ds);
}
