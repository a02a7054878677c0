/*
 * TLV maps: which Geneve option goes where in the flow key.
 *
 * Theory of operation
 * ===================
 * The key's tunnel-metadata space (key.h, words 37-40) is 32 bytes, eight
 * 4-byte slots.  A map binds up to 64 field names, tun_metadata0..63, each
 * to one option (class, type) and a run of slots: its offset and length.
 * Open vSwitch's tun-metadata.c does the same over 256 bytes with a chain
 * of pieces per option; flowdp's 32 bytes hold at most eight options (the
 * smallest takes one slot), so an option's bytes are always one
 * contiguous run, found first-fit, and the whole map is one small table:
 *
 *   opts[]      up to 8 {class, type, offset, len, index}, for the decap's
 *               lookup by (class, type): at most 8 compares of one line;
 *   by_index[]  64 bytes, the opts[] entry of each tun_metadataN or -1,
 *               for the flow syntax's lookup by name;
 *   used        the slots taken, one bit each.
 *
 * A change builds a new table, publishes it with one release store and
 * frees the old one after a grace period (RCU): a Geneve decap on a pmd
 * reads whichever version it finds, whole, without a lock.  Changes
 * serialise on the map's mutex.  A removed option's slots are free for
 * the next add: flows that matched it keep their bits (as in Open
 * vSwitch, changing a map under flows that use it is the controller's
 * business), and packets no longer set them.
 *
 * Worked example: add "{class=0x102,type=0x80,len=4}->tun_metadata0" to an
 * empty map: the first free run of one slot is slot 0, so opts[0] =
 * {0x102, 0x80, offset 0, len 4, index 0}, by_index[0] = 0, used = 0x01.
 * Then "{class=0xffff,type=3,len=8}->tun_metadata5": slots 1-2, offset 4,
 * used = 0x07.  A Geneve packet with option (0xffff, 3) of 8 bytes
 * 11 22 33 44 55 66 77 88: fdp__tlv_map_lookup() gives offset 4, len 8,
 * and fdp__tun_md_put() writes the low half of word 37 (0x11223344) and
 * the high half of word 38 (0x55667788) and sets presence bit 1 (slot 1)
 * of word 32.  "tun_metadata5=0x1122334455667788" then matches those bits
 * and that presence bit.
 */
#include <config.h>

#include "lib/tlv-map.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ds.h"
#include "lib/field.h"
#include "lib/rcu.h"
#include "lib/util.h"

/* One mapped option. */
struct tlv_opt {
    uint16_t opt_class;
    uint8_t type;
    uint8_t offset;             /* Bytes into the space. */
    uint8_t len;                /* Bytes. */
    uint8_t index;              /* tun_metadata<index>. */
};

/* One version of a map (immutable once published). */
struct tlv_table {
    uint8_t n_opts;
    uint8_t used;               /* Bit i: slot i is taken. */
    struct tlv_opt opts[FDP__TUN_MD_SLOTS];
    int8_t by_index[FDP_TLV_MAP_FIELDS];    /* opts[] entry, or -1. */
    struct rcu_head rcu;
};

struct fdp_tlv_map {
    pthread_mutex_t mutex;      /* Serialises changes. */
    struct tlv_table *table;    /* RCU; never NULL. */
};

static_assert(FDP_TLV_MAP_SPACE == FDP__TUN_MD_BYTES
              && FDP__TUN_MD_SLOTS <= 8,
              "the map's space is the key's, in at most 8 slots (a byte "
              "of presence bits)");

static struct tlv_table *
table_new(const struct tlv_table *from)
{
    struct tlv_table *t = malloc(sizeof *t);

    if (t) {
        if (from) {
            *t = *from;
        } else {
            memset(t, 0, sizeof *t);
            memset(t->by_index, -1, sizeof t->by_index);
        }
    }
    return t;
}

static void
table_free_cb(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct tlv_table, rcu));
}

int
fdp_tlv_map_create(struct fdp_tlv_map **mapp)
{
    struct fdp_tlv_map *map = malloc(sizeof *map);

    *mapp = NULL;
    if (!map) {
        return ENOMEM;
    }
    map->table = table_new(NULL);
    if (!map->table) {
        free(map);
        return ENOMEM;
    }
    pthread_mutex_init(&map->mutex, NULL);
    *mapp = map;
    return 0;
}

void
fdp_tlv_map_destroy(struct fdp_tlv_map *map)
{
    if (map) {
        free(map->table);
        pthread_mutex_destroy(&map->mutex);
        free(map);
    }
}

/* ---------------------------------------------------------------------- */
/* Text.                                                                   */

/* One "{class=C,type=T,len=L}->tun_metadataN". */
struct tlv_spec {
    uint16_t opt_class;
    uint8_t type;
    uint8_t len;
    uint8_t index;
};

static int
set_error(char **errorp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
set_error(char **errorp, const char *fmt, ...)
{
    if (errorp) {
        va_list args;
        va_start(args, fmt);
        if (vasprintf(errorp, fmt, args) < 0) {
            *errorp = NULL;
        }
        va_end(args);
    }
    return EINVAL;
}

/* Reads a number as %i does (0x hex, 0 octal, else decimal) up to 'max',
 * ending at one of 'ends'. */
static bool
read_number(const char **s, uint32_t max, const char *ends, uint32_t *v)
{
    char *end;

    if (**s < '0' || **s > '9') {
        return false;
    }
    errno = 0;
    unsigned long long x = strtoull(*s, &end, 0);
    if (errno || end == *s || x > max || !strchr(ends, *end) || !*end) {
        return false;
    }
    *s = end;
    *v = (uint32_t) x;
    return true;
}

static bool
skip(const char **s, const char *word)
{
    size_t n = strlen(word);

    if (strncmp(*s, word, n)) {
        return false;
    }
    *s += n;
    return true;
}

/* Parses 'text' into 'specs' (room for FDP_TLV_MAP_FIELDS + 1), as
 * ovs-ofctl's parse_ofp_tlv_table_mod_str(). */
static int
parse_specs(const char *text, struct tlv_spec *specs, size_t *n,
            char **errorp)
{
    const char *s = text;

    *n = 0;
    while (*s) {
        if (*s == ',') {
            s++;
        }
        const char *start = s;
        uint32_t c, t, l, idx;
        bool ok = skip(&s, "{class=") && read_number(&s, 0xffff, ",", &c)
                  && skip(&s, ",type=") && read_number(&s, 0xff, ",", &t)
                  && skip(&s, ",len=") && read_number(&s, 0xff, "}", &l)
                  && skip(&s, "}->tun_metadata");
        if (ok) {
            char *end;
            errno = 0;
            unsigned long x = strtoul(s, &end, 10);
            ok = end != s && !errno && (*end == ',' || !*end)
                 && *s >= '0' && *s <= '9';
            if (ok && x >= FDP_TLV_MAP_FIELDS) {
                return set_error(errorp, "tun_metadata%lu: the index is at "
                                 "most %d", x, FDP_TLV_MAP_FIELDS - 1);
            }
            idx = (uint32_t) x;
            s = end;
        }
        if (!ok) {
            return set_error(errorp, "invalid tlv mapping at \"%.40s\" "
                             "(expected {class=C,type=T,len=L}->"
                             "tun_metadataN)", start);
        }
        if (l < 4 || l > FDP_TLV_MAP_SPACE || l % 4) {
            return set_error(errorp, "tun_metadata%" PRIu32 ": len=%" PRIu32
                             " is not a multiple of 4 from 4 to %d",
                             idx, l, FDP_TLV_MAP_SPACE);
        }
        if (*n == FDP_TLV_MAP_FIELDS) {
            return set_error(errorp, "more than %d mappings",
                             FDP_TLV_MAP_FIELDS);
        }
        specs[(*n)++] = (struct tlv_spec) {
            (uint16_t) c, (uint8_t) t, (uint8_t) l, (uint8_t) idx
        };
    }
    return 0;
}

/* The first run of 'n_slots' free slots of 'used', or -1. */
static int
first_fit(uint8_t used, unsigned int n_slots)
{
    uint32_t run = (1u << n_slots) - 1;

    for (unsigned int i = 0; i + n_slots <= FDP__TUN_MD_SLOTS; i++) {
        if (!(used & (run << i))) {
            return (int) i;
        }
    }
    return -1;
}

static unsigned int
table_bytes(const struct tlv_table *t)
{
    unsigned int n = 0;

    for (unsigned int i = 0; i < t->n_opts; i++) {
        n += t->opts[i].len;
    }
    return n;
}

/* Publishes 'next' as 'map''s table (the caller holds the mutex). */
static void
publish(struct fdp_tlv_map *map, struct tlv_table *next)
{
    struct tlv_table *old = map->table;

    FDP_RCU_SET(map->table, next);
    fdp__rcu_defer(&old->rcu, table_free_cb);
}

int
fdp_tlv_map_add(struct fdp_tlv_map *map, const char *text, char **errorp)
{
    struct tlv_spec specs[FDP_TLV_MAP_FIELDS];
    size_t n;
    int error;

    if (errorp) {
        *errorp = NULL;
    }
    error = parse_specs(text ? text : "", specs, &n, errorp);
    if (error) {
        return error;
    }
    pthread_mutex_lock(&map->mutex);
    struct tlv_table *t = table_new(map->table);
    if (!t) {
        pthread_mutex_unlock(&map->mutex);
        return ENOMEM;
    }
    unsigned int need = table_bytes(t);
    for (size_t i = 0; i < n; i++) {
        need += specs[i].len;
    }
    for (size_t i = 0; i < n && !error; i++) {
        const struct tlv_spec *sp = &specs[i];
        if (t->by_index[sp->index] >= 0) {
            error = set_error(errorp, "tun_metadata%u is already mapped",
                              sp->index);
            break;
        }
        for (unsigned int k = 0; k < t->n_opts; k++) {
            if (t->opts[k].opt_class == sp->opt_class
                && t->opts[k].type == sp->type) {
                error = set_error(errorp, "option {class=%#x,type=%#x} is "
                                  "already mapped, to tun_metadata%u",
                                  sp->opt_class, sp->type,
                                  t->opts[k].index);
            }
        }
        if (error) {
            break;
        }
        if (need > FDP_TLV_MAP_SPACE) {
            error = set_error(errorp, "tun_metadata space is %d bytes; map "
                              "needs %u", FDP_TLV_MAP_SPACE, need);
            break;
        }
        int slot = first_fit(t->used, sp->len / 4u);
        if (slot < 0) {
            error = set_error(errorp, "tun_metadata%u: no %u contiguous "
                              "free bytes in the %d-byte tun_metadata space "
                              "(removed options left it fragmented)",
                              sp->index, sp->len, FDP_TLV_MAP_SPACE);
            break;
        }
        t->used |= (uint8_t) (((1u << (sp->len / 4u)) - 1) << slot);
        t->by_index[sp->index] = (int8_t) t->n_opts;
        t->opts[t->n_opts++] = (struct tlv_opt) {
            sp->opt_class, sp->type, (uint8_t) (slot * 4), sp->len,
            sp->index,
        };
    }
    if (error) {
        free(t);
    } else {
        publish(map, t);
    }
    pthread_mutex_unlock(&map->mutex);
    return error;
}

int
fdp_tlv_map_del(struct fdp_tlv_map *map, const char *text, char **errorp)
{
    struct tlv_spec specs[FDP_TLV_MAP_FIELDS];
    size_t n = 0;
    int error = 0;

    if (errorp) {
        *errorp = NULL;
    }
    if (text && *text) {
        error = parse_specs(text, specs, &n, errorp);
        if (error) {
            return error;
        }
    }
    pthread_mutex_lock(&map->mutex);
    struct tlv_table *t = table_new(text && *text ? map->table : NULL);
    if (!t) {
        pthread_mutex_unlock(&map->mutex);
        return ENOMEM;
    }
    for (size_t i = 0; i < n && !error; i++) {
        const struct tlv_spec *sp = &specs[i];
        int k = t->by_index[sp->index];
        if (k < 0 || t->opts[k].opt_class != sp->opt_class
            || t->opts[k].type != sp->type || t->opts[k].len != sp->len) {
            error = set_error(errorp, "{class=%#x,type=%#x,len=%u}->"
                              "tun_metadata%u is not mapped",
                              sp->opt_class, sp->type, sp->len, sp->index);
            break;
        }
        struct tlv_opt gone = t->opts[k];
        t->used &= (uint8_t) ~(((1u << (gone.len / 4u)) - 1)
                               << (gone.offset / 4u));
        t->opts[k] = t->opts[--t->n_opts];
        t->by_index[t->opts[k].index] = (int8_t) k;
        t->by_index[gone.index] = -1;
    }
    if (error) {
        free(t);
    } else {
        publish(map, t);
    }
    pthread_mutex_unlock(&map->mutex);
    return error;
}

/* The table to read, inside the caller's RCU read section. */
static const struct tlv_table *
table_get(const struct fdp_tlv_map *map)
{
    return FDP_RCU_GET(((struct fdp_tlv_map *) map)->table);
}

char *
fdp_tlv_map_dump(const struct fdp_tlv_map *map)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__rcu_read_lock();
    const struct tlv_table *t = table_get(map);
    fdp__ds_printf(&ds, " max option space=%d max fields=%d\n",
                   FDP_TLV_MAP_SPACE, FDP_TLV_MAP_FIELDS);
    fdp__ds_printf(&ds, " allocated option space=%u\n\n", table_bytes(t));
    fdp__ds_put(&ds, " mapping table:\n");
    fdp__ds_put(&ds, "  class  type  length  match field\n");
    fdp__ds_put(&ds, " ------  ----  ------  --------------");
    for (unsigned int idx = 0; idx < FDP_TLV_MAP_FIELDS; idx++) {
        int k = t->by_index[idx];
        if (k >= 0) {
            const struct tlv_opt *o = &t->opts[k];
            /* ovs-ofctl's "%#6x  %#4x": "0x" only for non-zero values. */
            char c[16], ty[16];
            snprintf(c, sizeof c, o->opt_class ? "%#x" : "0",
                     (unsigned int) o->opt_class);
            snprintf(ty, sizeof ty, o->type ? "%#x" : "0",
                     (unsigned int) o->type);
            fdp__ds_printf(&ds, "\n %6s  %4s  %6u  tun_metadata%u", c, ty,
                           o->len, idx);
        }
    }
    fdp__ds_putc(&ds, '\n');
    fdp__rcu_read_unlock();
    return fdp__ds_steal(&ds);
}

char *
fdp_tlv_map_to_text(const struct fdp_tlv_map *map)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__rcu_read_lock();
    const struct tlv_table *t = table_get(map);
    for (unsigned int idx = 0; idx < FDP_TLV_MAP_FIELDS; idx++) {
        int k = t->by_index[idx];
        if (k >= 0) {
            const struct tlv_opt *o = &t->opts[k];
            fdp__ds_printf(&ds, "%s{class=%#x,type=%#x,len=%u}->"
                           "tun_metadata%u", ds.len ? "," : "",
                           o->opt_class, o->type, o->len, idx);
        }
    }
    fdp__rcu_read_unlock();
    char *s = fdp__ds_steal(&ds);
    return s ? s : strdup("");
}

/* ---------------------------------------------------------------------- */
/* Lookups.                                                                */

int
fdp__tlv_map_lookup(const struct fdp_tlv_map *map, uint16_t opt_class,
                    uint8_t type, unsigned int *offset, unsigned int *len)
{
    const struct tlv_table *t = table_get(map);

    for (unsigned int k = 0; k < t->n_opts; k++) {
        if (t->opts[k].opt_class == opt_class && t->opts[k].type == type) {
            *offset = t->opts[k].offset;
            *len = t->opts[k].len;
            return 0;
        }
    }
    return ENOENT;
}

size_t
fdp__tlv_map_options(const struct fdp_tlv_map *map,
                     struct fdp__tlv_opt_info *opts)
{
    const struct tlv_table *t = table_get(map);
    size_t n = 0;

    /* by_index[] lists them in index order. */
    for (unsigned int i = 0; i < FDP_TLV_MAP_FIELDS && n < t->n_opts; i++) {
        int k = t->by_index[i];
        if (k >= 0) {
            const struct tlv_opt *o = &t->opts[k];
            opts[n++] = (struct fdp__tlv_opt_info) {
                .opt_class = o->opt_class, .type = o->type,
                .offset = o->offset, .len = o->len, .index = o->index,
            };
        }
    }
    return n;
}

int
fdp__tlv_map_at(const struct fdp_tlv_map *map, unsigned int slot,
                uint16_t *opt_class, uint8_t *type, unsigned int *len)
{
    const struct tlv_table *t = table_get(map);

    for (unsigned int k = 0; k < t->n_opts; k++) {
        if (t->opts[k].offset == slot * 4) {
            *opt_class = t->opts[k].opt_class;
            *type = t->opts[k].type;
            *len = t->opts[k].len;
            return 0;
        }
    }
    return ENOENT;
}

bool
fdp__tlv_map_field(const struct fdp_tlv_map *map, unsigned int index,
                   unsigned int *offset, unsigned int *len)
{
    bool found = false;

    if (index >= FDP_TLV_MAP_FIELDS) {
        return false;
    }
    fdp__rcu_read_lock();
    const struct tlv_table *t = table_get(map);
    int k = t->by_index[index];
    if (k >= 0) {
        *offset = t->opts[k].offset;
        *len = t->opts[k].len;
        found = true;
    }
    fdp__rcu_read_unlock();
    return found;
}

bool
fdp_tlv_map_field(const struct fdp_tlv_map *map, unsigned int index,
                  unsigned int *offset, unsigned int *len)
{
    return fdp__tlv_map_field(map, index, offset, len);
}

/* Byte 'i' of the space is byte 7 - i % 8 (counting from the least
 * significant) of word 37 + i / 8: the space reads as the option bytes in
 * wire order, word by word. */
void
fdp__tun_md_put(struct fdp_key *key, unsigned int offset,
                const uint8_t *data, unsigned int len)
{
    for (unsigned int i = 0; i < len; i++) {
        unsigned int b = offset + i;
        uint64_t *w = &key->w[FDP__TUN_MD_WORD + b / 8];
        unsigned int sh = (7 - b % 8) * 8;
        *w = (*w & ~((uint64_t) 0xff << sh)) | (uint64_t) data[i] << sh;
    }
    key->w[FDP__TUN_MD_PRESENT_WORD]
        |= (uint64_t) 1 << (FDP__TUN_MD_PRESENT_SHIFT + offset / 4);
}

bool
fdp__tun_md_get(const struct fdp_key *key, unsigned int offset,
                uint8_t *data, unsigned int len)
{
    for (unsigned int i = 0; i < len; i++) {
        unsigned int b = offset + i;
        data[i] = (uint8_t) (key->w[FDP__TUN_MD_WORD + b / 8]
                             >> ((7 - b % 8) * 8));
    }
    return (key->w[FDP__TUN_MD_PRESENT_WORD]
            >> (FDP__TUN_MD_PRESENT_SHIFT + offset / 4)) & 1;
}
