/*
 * flowdpd's OpenFlow group, meter, TLV table and conntrack flush messages:
 * what of_dispatch() (flowdpd-openflow.c) hands of_group_dispatch().
 *
 * Theory of operation.  Every change goes through the same journalled
 * JSON operations flowdp-ctl's commands use, so that a group or meter
 * added over OpenFlow and one added by flowdp-ctl are the same object,
 * recorded alike by the journal and dumped alike:
 *   group mod add, modify, add-or-mod  {"op": "add-groups", "command",
 *                                       "groups": [TEXT]} (flowdpd-groups.c)
 *   group mod delete                   {"op": "del-groups", "group_id"}
 *   group mod insert/remove bucket     the group as it is, with the
 *                                      buckets inserted or removed as
 *                                      Open vSwitch's ofproto does it, as
 *                                      an "add-groups" modify
 *   meter mod                          {"op": "meter-add"|"meter-mod"|
 *                                       "meter-del", "meter": TEXT}
 *                                      (flowdpd-meters.c)
 *   NXT_TLV_TABLE_MOD                  {"op": "tlv-add"|"tlv-del", "map"}
 *                                      (flowdpd-tlv.c)
 * The texts are what the decoded message means in flowdp's group, meter
 * and TLV map syntax (lib/ofp-group.c writes the group's).  Conntrack
 * flushes are not journalled (connections are not): NXT_CT_FLUSH_ZONE and
 * NXT_CT_FLUSH call the datapath's flush as flush-conntrack does
 * (flowdpd-ct.c).
 *
 * Replies are built from the daemon's state: group desc and stats from
 * the pipeline's groups (fdp_pipeline_group_dump()), meter config and
 * stats from the datapath's meters with the flows that use each counted
 * (as meter-stats does), features as Open vSwitch 3.1's userspace
 * datapath reports them, TLV table replies from the pipeline's map.
 *
 * Errors: a message the codec refuses gets the codec's error (Open
 * vSwitch's, lib/ofp-group.c); an operation that fails gets the error
 * Open vSwitch's ofproto gives for the same failure, read from the
 * operation's message.  A slave's modifications never get here
 * (of_dispatch() refuses them first).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/flowdpd-openflow.h"
#include "utilities/tool.h"
#include "lib/actions-internal.h"
#include "lib/ds.h"
#include "lib/ofp-msgs.h"

#include <flowdp/group.h>
#include <flowdp/meter.h>
#include <flowdp/tlv-map.h>

#include <jansson.h>

/* Sends 'b' if it holds a whole reply, else 'error' (or out of memory). */
static void
send_reply(struct ofconn *c, struct fdp__ofpbuf *b, int error,
           const uint8_t *msg, size_t len)
{
    if (error == EINVAL) {
        ofconn_send_error(c, FDP_OFPBRC_BAD_STAT, msg, len);
    } else if (error || fdp__ofpbuf_failed(b)) {
        ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
    } else {
        ofconn_send(c, b->data, b->size);
    }
    fdp__ofpbuf_uninit(b);
}

/* The OpenFlow error an operation's failure message names ("...
 * (OFPMMFC_METER_EXISTS)"), or 'dflt'. */
static enum fdp_ofperr
error_named_in(const char *m, enum fdp_ofperr dflt)
{
    const char *open = m ? strrchr(m, '(') : NULL;

    if (open) {
        size_t n = strcspn(open + 1, ")");
        for (int e = FDP__OFPERR_BASE + 1; e < FDP__OFPERR_END; e++) {
            const char *name = fdp_ofperr_name(e);
            if (strlen(name) == n && !strncmp(open + 1, name, n)) {
                return (enum fdp_ofperr) e;
            }
        }
    }
    return dflt;
}

/* Applies 'op' (which it releases); 0, or the error 'map' makes of the
 * failure's message. */
static enum fdp_ofperr
apply(struct server *s, struct ofconn *c, json_t *op,
      enum fdp_ofperr (*map)(const char *msg))
{
    struct op_result r = { 0 };
    enum fdp_ofperr oerr = FDP_OFPERR_NONE;

    if (!op) {
        return FDP_OFPERR_NOMEM;
    }
    int error = apply_op(s, op, &r);
    if (error) {
        vlog(L_INFO, "%s: %s refused: %s", ofconn_name(c),
             json_string_value(json_object_get(op, "op")),
             r.msg ? r.msg : strerror(error));
        oerr = map(r.msg ? r.msg : "");
    }
    json_decref(op);
    free(r.msg);
    return oerr;
}

/* ---------------------------------------------------------------------- */
/* Groups.                                                                 */

/* The errors of flowdpd-groups.c's group operations, as ofproto gives
 * them. */
static enum fdp_ofperr
group_error(const char *m)
{
    if (strstr(m, "a group with that id exists")) {
        return FDP_OFPGMFC_GROUP_EXISTS;
    }
    if (strstr(m, "no such group")) {
        return FDP_OFPGMFC_UNKNOWN_GROUP;
    }
    if (strstr(m, "lead back to the group")) {
        return FDP_OFPGMFC_LOOP;
    }
    if (strstr(m, "out of memory") || strstr(m, "Cannot allocate")) {
        return FDP_OFPGMFC_OUT_OF_GROUPS;
    }
    return FDP_OFPGMFC_INVALID_GROUP;
}

/* Copies group 'id' as the pipeline has it now into '*g'. */
struct group_copy {
    struct fdp_ofp_group *g;
    bool found;
    int error;
};

static bool
copy_group(void *aux, const struct fdp_group *group,
           const struct fdp_group_stats *st)
{
    struct group_copy *gc = aux;

    (void) st;
    gc->found = true;
    gc->error = fdp_ofp_group_from_group(group, gc->g);
    return false;
}

static int
find_bucket(const struct fdp_ofp_group *g, uint32_t id)
{
    for (size_t i = 0; i < g->n_buckets; i++) {
        if (g->buckets[i].bucket_id == id) {
            return (int) i;
        }
    }
    return -1;
}

/* The group 'cur' becomes with insert or remove bucket 'gm', as Open
 * vSwitch's copy_buckets_for_insert_bucket() and _remove_bucket() make
 * it: the group keeps its type and selection method. */
static enum fdp_ofperr
edit_buckets(struct fdp_ofp_group *cur, struct fdp_ofp_group *gm)
{
    uint32_t cb = gm->command_bucket_id;

    if (gm->command == FDP_OFPGC_REMOVE_BUCKET) {
        int skip = -1;
        if (cb == FDP_OFPG_BUCKET_ALL) {
            for (size_t i = 0; i < cur->n_buckets; i++) {
                fdp_actions_destroy(cur->buckets[i].actions);
            }
            cur->n_buckets = 0;
            return 0;
        } else if (cb == FDP_OFPG_BUCKET_FIRST) {
            skip = cur->n_buckets ? 0 : -1;
        } else if (cb == FDP_OFPG_BUCKET_LAST) {
            skip = cur->n_buckets ? (int) cur->n_buckets - 1 : -1;
        } else {
            skip = find_bucket(cur, cb);
            if (skip < 0) {
                return FDP_OFPGMFC_UNKNOWN_BUCKET;
            }
        }
        if (skip >= 0) {
            fdp_actions_destroy(cur->buckets[skip].actions);
            memmove(&cur->buckets[skip], &cur->buckets[skip + 1],
                    (cur->n_buckets - (size_t) skip - 1)
                    * sizeof cur->buckets[0]);
            cur->n_buckets--;
        }
        return 0;
    }

    /* Insert. */
    size_t at;
    if (cb <= FDP_OFPG_BUCKET_MAX) {
        int i = find_bucket(cur, cb);
        if (i < 0) {
            return FDP_OFPGMFC_UNKNOWN_BUCKET;
        }
        at = (size_t) i + 1;
    } else if (cb == FDP_OFPG_BUCKET_FIRST) {
        at = 0;
    } else {
        at = cur->n_buckets;
    }
    for (size_t i = 0; i < gm->n_buckets; i++) {
        if (find_bucket(cur, gm->buckets[i].bucket_id) >= 0) {
            return FDP_OFPGMFC_BUCKET_EXISTS;
        }
    }
    return fdp_ofp_group_take_buckets(cur, gm, at) ? FDP_OFPERR_NOMEM : 0;
}

static enum fdp_ofperr
group_mod(struct server *s, struct ofconn *c, const uint8_t *msg, size_t len)
{
    struct fdp_ofp_group gm;
    int error = fdp_ofp_decode_group_mod(msg, len,
                                         fdp_pipeline_tlv_map(s->pipeline),
                                         &gm);
    if (error) {
        return (enum fdp_ofperr) error;
    }

    if (gm.command == FDP_OFPGC_DELETE) {
        json_int_t id = (gm.group_id == FDP_OFPG_ALL ? (json_int_t) -1
                         : (json_int_t) gm.group_id);
        fdp_ofp_group_destroy(&gm);
        if (id > (json_int_t) FDP_GROUP_MAX) {
            return FDP_OFPERR_NONE;     /* No such group: nothing to do. */
        }
        return apply(s, c, json_pack("{s:s, s:I}", "op", "del-groups",
                                     "group_id", id), group_error);
    }
    if (gm.group_id > FDP_OFPG_MAX) {
        /* As ofproto: a group that cannot exist is no group to modify,
         * and an invalid one to add. */
        bool adds = (gm.command == FDP_OFPGC_ADD
                     || gm.command == FDP_OFPGC_ADD_OR_MOD);
        fdp_ofp_group_destroy(&gm);
        return adds ? FDP_OFPGMFC_INVALID_GROUP : FDP_OFPGMFC_UNKNOWN_GROUP;
    }

    const char *command;
    struct fdp_ofp_group cur;
    const struct fdp_ofp_group *g = &gm;
    enum fdp_ofperr oerr = FDP_OFPERR_NONE;
    memset(&cur, 0, sizeof cur);
    switch (gm.command) {
    case FDP_OFPGC_ADD:
        command = "add";
        break;
    case FDP_OFPGC_MODIFY:
        command = "modify";
        break;
    case FDP_OFPGC_ADD_OR_MOD:
        command = "add_or_mod";
        break;
    default: {
        struct group_copy gc = { .g = &cur };
        command = "modify";
        if (fdp_pipeline_group_dump(s->pipeline, gm.group_id, false,
                                    copy_group, &gc) || gc.error) {
            oerr = FDP_OFPERR_NOMEM;
        } else if (!gc.found) {
            oerr = FDP_OFPGMFC_UNKNOWN_GROUP;
        } else {
            oerr = edit_buckets(&cur, &gm);
        }
        g = &cur;
        break;
    }
    }
    char *text = oerr ? NULL : fdp_ofp_group_to_text(g);
    if (!oerr && !text) {
        oerr = FDP_OFPERR_NOMEM;
    }
    fdp_ofp_group_destroy(&gm);
    fdp_ofp_group_destroy(&cur);
    if (oerr) {
        return oerr;
    }
    json_t *op = json_pack("{s:s, s:s, s:[s]}", "op", "add-groups",
                           "command", command, "groups", text);
    free(text);
    return apply(s, c, op, group_error);
}

/* What a group stats or desc walk builds. */
struct group_walk {
    struct fdp_ofpmp *mp;
    const struct fdp_tlv_map *tlv;
    int64_t now;
    int error;
};

static bool
put_group(void *aux, const struct fdp_group *group,
          const struct fdp_group_stats *st)
{
    struct group_walk *w = aux;

    if (st) {
        int64_t ms = w->now - st->created_ms;
        ms = ms < 0 ? 0 : ms;
        struct fdp_ofp_group_stats gs = {
            .group_id = st->group_id,
            .ref_count = st->ref_count,
            .packet_count = st->n_packets,
            .byte_count = st->n_bytes,
            .duration_sec = (uint32_t) (ms / 1000),
            .duration_nsec = (uint32_t) (ms % 1000) * 1000000u,
            .n_buckets = st->n_buckets,
        };
        gs.buckets = calloc(st->n_buckets ? st->n_buckets : 1,
                            sizeof *gs.buckets);
        if (!gs.buckets) {
            w->error = ENOMEM;
            return false;
        }
        for (size_t i = 0; i < st->n_buckets; i++) {
            gs.buckets[i].packet_count = st->buckets[i].n_packets;
            gs.buckets[i].byte_count = st->buckets[i].n_bytes;
        }
        w->error = fdp_ofp_put_group_stats(w->mp, &gs);
        free(gs.buckets);
    } else {
        struct fdp_ofp_group g;
        w->error = fdp_ofp_group_from_group(group, &g);
        if (!w->error) {
            w->error = fdp_ofp_put_group_desc(w->mp, &g, w->tlv);
            fdp_ofp_group_destroy(&g);
        }
    }
    return !w->error;
}

static void
group_stats(struct server *s, struct ofconn *c, const uint8_t *msg,
            size_t len, const struct fdp_ofp_header *h, bool stats)
{
    uint32_t id;
    int error = fdp_ofp_decode_group_request(msg, len, &id);

    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    struct fdp__ofpbuf b;
    struct fdp_ofpmp mp;
    struct group_walk w = {
        .mp = &mp, .tlv = fdp_pipeline_tlv_map(s->pipeline),
        .now = monotonic_ms(),
    };
    fdp__ofpbuf_init(&b);
    fdp_ofpmp_init(&mp, &b, h);
    /* OFPG_ALL is every group; any other id above OFPG_MAX is none (as
     * ofproto's handle_group_request()). */
    if (id == FDP_OFPG_ALL || id <= FDP_GROUP_MAX) {
        error = fdp_pipeline_group_dump(s->pipeline,
                                        id <= FDP_GROUP_MAX ? id
                                        : FDP_GROUP_ALL, stats, put_group,
                                        &w);
    }
    if (!error) {
        error = w.error;
    }
    if (!error) {
        error = fdp_ofpmp_finish(&mp);
    }
    send_reply(c, &b, error, msg, len);
}

/* Open vSwitch 3.1's userspace datapath's group features: every type,
 * select by weight and liveness, chaining; the actions of each version it
 * can run in a bucket. */
static void
group_features(struct ofconn *c, const uint8_t *msg, size_t len,
               const struct fdp_ofp_header *h)
{
    /* Bit N for action type N of the version: OpenFlow 1.0's twelve
     * actions; 1.1's without copy_ttl_in/out (11, 12); 1.2+'s output,
     * set/dec_mpls_ttl, push/pop_vlan, push/pop_mpls, set_queue, group,
     * set/dec_nw_ttl, set_field (0, 15-25). */
    uint32_t actions = (h->version == FDP_OFP10 ? 0xfff
                        : h->version == FDP_OFP11 ? 0x1ffe7ff
                        : 0x3ff8001);
    struct fdp_ofp_group_features f = {
        .types = 0xf,
        .capabilities = 0x7,    /* SELECT_WEIGHT, SELECT_LIVENESS,
                                 * CHAINING. */
    };
    for (int i = 0; i < 4; i++) {
        f.max_groups[i] = FDP_OFPG_MAX;
        f.actions[i] = actions;
    }
    struct fdp__ofpbuf b;
    fdp__ofpbuf_init(&b);
    send_reply(c, &b, fdp_ofp_encode_group_features_reply(&b, h, &f), msg,
               len);
}

/* ---------------------------------------------------------------------- */
/* Meters.                                                                 */

static enum fdp_ofperr
meter_error(const char *m)
{
    enum fdp_ofperr e = error_named_in(m, FDP_OFPERR_NONE);

    if (e) {
        return e;
    }
    if (strstr(m, "rate")) {
        return FDP_OFPMMFC_BAD_RATE;
    }
    if (strstr(m, "burst")) {
        return FDP_OFPMMFC_BAD_BURST;
    }
    return FDP_OFPMMFC_UNKNOWN;
}

/* flowdp's meter text for 'mc' (flowdp/meter.h's syntax). */
static char *
meter_text(const struct fdp_meter_config *mc)
{
    struct fdp__ds ds = FDP__DS_INIT;

    fdp__ds_printf(&ds, "meter=%" PRIu32, mc->id);
    if (mc->flags & FDP_METER_KBPS) {
        fdp__ds_put(&ds, ",kbps");
    }
    if (mc->flags & FDP_METER_PKTPS) {
        fdp__ds_put(&ds, ",pktps");
    }
    if (mc->flags & FDP_METER_BURST) {
        fdp__ds_put(&ds, ",burst");
    }
    if (mc->flags & FDP_METER_STATS) {
        fdp__ds_put(&ds, ",stats");
    }
    fdp__ds_put(&ds, ",bands=");
    for (uint16_t i = 0; i < mc->n_bands; i++) {
        const struct fdp_meter_band *band = &mc->bands[i];
        fdp__ds_printf(&ds, "%stype=drop,rate=%" PRIu32, i ? "," : "",
                       band->rate);
        if (mc->flags & FDP_METER_BURST) {
            /* As Open vSwitch's userspace datapath: no burst size is the
             * rate. */
            fdp__ds_printf(&ds, ",burst_size=%" PRIu32,
                           band->burst_size ? band->burst_size : band->rate);
        }
    }
    return fdp__ds_steal(&ds);
}

static enum fdp_ofperr
meter_mod(struct server *s, struct ofconn *c, const uint8_t *msg, size_t len)
{
    struct fdp_ofp_meter_mod mm;
    int error = fdp_ofp_decode_meter_mod(msg, len, &mm);

    if (error) {
        return (enum fdp_ofperr) error;
    }
    uint32_t id = mm.config.id;
    if (mm.command == FDP_OFPMC_DELETE) {
        if (!id || (id > FDP_METER_MAX_ID && id != FDP_METER_ALL)) {
            return FDP_OFPERR_NONE;     /* Nothing to delete. */
        }
        char text[32];
        if (id == FDP_METER_ALL) {
            snprintf(text, sizeof text, "meter=all");
        } else {
            snprintf(text, sizeof text, "meter=%" PRIu32, id);
        }
        return apply(s, c, json_pack("{s:s, s:s}", "op", "meter-del",
                                     "meter", text), meter_error);
    }
    /* Open vSwitch's handle_meter_mod() and its userspace datapath's
     * meter_set(): ids 1 to OFPM13_MAX (flowdp has no slowpath and
     * controller meters), the four flags, drop bands, a rate. */
    if (!id || id > FDP_METER_MAX_ID) {
        return FDP_OFPMMFC_INVALID_METER;
    }
    if (mm.config.flags & ~(FDP_METER_KBPS | FDP_METER_PKTPS
                            | FDP_METER_BURST | FDP_METER_STATS)) {
        return FDP_OFPMMFC_BAD_FLAGS;
    }
    for (uint16_t i = 0; i < mm.config.n_bands; i++) {
        if (mm.config.bands[i].type != FDP_METER_BAND_DROP) {
            return FDP_OFPMMFC_BAD_BAND;
        }
        if (!mm.config.bands[i].rate) {
            return FDP_OFPMMFC_BAD_RATE;
        }
    }
    if (!mm.config.n_bands) {
        return FDP_OFPMMFC_BAD_BAND;
    }
    char *text = meter_text(&mm.config);
    if (!text) {
        return FDP_OFPERR_NOMEM;
    }
    json_t *op = json_pack("{s:s, s:s}", "op", mm.command == FDP_OFPMC_ADD
                           ? "meter-add" : "meter-mod", "meter", text);
    free(text);
    return apply(s, c, op, meter_error);
}

/* Counts the flows that use each meter of 'ids' (sorted). */
struct meter_count {
    const uint32_t *ids;
    uint32_t *counts;
    size_t n;
};

static bool
count_meter_flow(const struct fdp_rule *rule, void *aux)
{
    struct meter_count *mc = aux;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    const struct fdp__action *a = fdp__actions_first(spec.actions);
    if (a && a->type == FDP_ACT_METER) {
        for (size_t i = 0; i < mc->n; i++) {
            if (mc->ids[i] == a->arg) {
                mc->counts[i]++;
                break;
            }
        }
    }
    return true;
}

static void
meter_stats(struct server *s, struct ofconn *c, const uint8_t *msg,
            size_t len, const struct fdp_ofp_header *h, bool stats)
{
    uint32_t id;
    int error = fdp_ofp_decode_meter_request(msg, len, &id);

    if (error) {
        ofconn_send_error(c, (enum fdp_ofperr) error, msg, len);
        return;
    }
    size_t n = id == FDP_METER_ALL ? fdp_dp_meter_list(s->dp, NULL, 0) : 1;
    uint32_t *ids = malloc((n + 1) * sizeof *ids);
    uint32_t *counts = calloc(n + 1, sizeof *counts);
    if (!ids || !counts) {
        free(ids);
        free(counts);
        ofconn_send_error(c, FDP_OFPERR_NOMEM, msg, len);
        return;
    }
    if (id == FDP_METER_ALL) {
        n = fdp_dp_meter_list(s->dp, ids, n);
    } else if (fdp_dp_meter_get(s->dp, id, NULL, NULL)) {
        /* As Open vSwitch's handle_meter_request(). */
        free(ids);
        free(counts);
        ofconn_send_error(c, FDP_OFPMMFC_UNKNOWN_METER, msg, len);
        return;
    } else {
        ids[0] = id;
    }
    if (stats) {
        struct meter_count mc = { .ids = ids, .counts = counts, .n = n };
        fdp_table_read_lock();
        fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, count_meter_flow,
                              &mc);
        fdp_table_read_unlock();
    }
    struct fdp__ofpbuf b;
    struct fdp_ofpmp mp;
    fdp__ofpbuf_init(&b);
    fdp_ofpmp_init(&mp, &b, h);
    for (size_t i = 0; i < n && !error; i++) {
        struct fdp_meter_config cfg;
        struct fdp_meter_stats st;
        if (fdp_dp_meter_get(s->dp, ids[i], &cfg, &st)) {
            continue;           /* None such: an empty reply. */
        }
        st.flow_count = counts[i];
        error = stats ? fdp_ofp_put_meter_stats(&mp, &st)
                      : fdp_ofp_put_meter_config(&mp, &cfg);
    }
    free(ids);
    free(counts);
    if (!error) {
        error = fdp_ofpmp_finish(&mp);
    }
    send_reply(c, &b, error, msg, len);
}

static void
meter_features(struct ofconn *c, const uint8_t *msg, size_t len,
               const struct fdp_ofp_header *h)
{
    /* As Open vSwitch 3.1's userspace datapath: drop bands only. */
    struct fdp_ofp_meter_features f = {
        .max_meter = FDP_METER_MAX_METERS,
        .band_types = 1u << FDP_METER_BAND_DROP,
        .capabilities = (FDP_METER_KBPS | FDP_METER_PKTPS | FDP_METER_BURST
                         | FDP_METER_STATS),
        .max_bands = FDP_METER_MAX_BANDS,
        .max_color = 0,
    };
    struct fdp__ofpbuf b;
    fdp__ofpbuf_init(&b);
    send_reply(c, &b, fdp_ofp_encode_meter_features_reply(&b, h, &f), msg,
               len);
}

/* ---------------------------------------------------------------------- */
/* TLV tables.                                                             */

static enum fdp_ofperr
tlv_error(const char *m)
{
    enum fdp_ofperr e = error_named_in(m, FDP_OFPERR_NONE);

    if (e) {
        return e;
    }
    if (strstr(m, "space") || strstr(m, "bytes")) {
        return FDP_NXTTMFC_TABLE_FULL;
    }
    if (strstr(m, "len")) {
        return FDP_NXTTMFC_BAD_OPT_LEN;
    }
    if (strstr(m, "earlier") || strstr(m, "twice")) {
        return FDP_NXTTMFC_DUP_ENTRY;
    }
    return FDP_NXTTMFC_ALREADY_MAPPED;
}

/* Open vSwitch's tun_metadata_add_entry() checks, in its order, for each
 * mapping against the map and the mappings before it: an index taken is
 * NXTTMFC_ALREADY_MAPPED, an option taken NXTTMFC_DUP_ENTRY. */
static enum fdp_ofperr
tlv_check_add(struct server *s, const struct fdp_ofp_tlv_table *t)
{
    char *now = fdp_tlv_map_to_text(fdp_pipeline_tlv_map(s->pipeline));
    struct fdp_ofp_tlv_table cur;

    if (!now || fdp_ofp_tlv_table_from_text(now, &cur)) {
        free(now);
        return FDP_OFPERR_NOMEM;
    }
    free(now);
    for (size_t i = 0; i < t->n; i++) {
        const struct fdp_ofp_tlv_mapping *m = &t->mappings[i];
        for (size_t j = 0; j < cur.n + i; j++) {
            const struct fdp_ofp_tlv_mapping *o
                = j < cur.n ? &cur.mappings[j] : &t->mappings[j - cur.n];
            if (o->index == m->index) {
                return FDP_NXTTMFC_ALREADY_MAPPED;
            }
        }
        for (size_t j = 0; j < cur.n + i; j++) {
            const struct fdp_ofp_tlv_mapping *o
                = j < cur.n ? &cur.mappings[j] : &t->mappings[j - cur.n];
            if (o->option_class == m->option_class
                && o->option_type == m->option_type) {
                return FDP_NXTTMFC_DUP_ENTRY;
            }
        }
    }
    return FDP_OFPERR_NONE;
}

static enum fdp_ofperr
tlv_mod(struct server *s, struct ofconn *c, const uint8_t *msg, size_t len)
{
    struct fdp_ofp_tlv_table t;
    int error = fdp_ofp_decode_tlv_table(msg, len, &t);

    if (error) {
        return (enum fdp_ofperr) error;
    }
    if (t.command == FDP_NXTTMC_CLEAR) {
        return apply(s, c, json_pack("{s:s}", "op", "tlv-del"), tlv_error);
    }
    if (t.command == FDP_NXTTMC_DELETE) {
        /* Open vSwitch deletes by index and ignores unmapped ones; the
         * operation names each mapping as it is. */
        char *now = fdp_tlv_map_to_text(fdp_pipeline_tlv_map(s->pipeline));
        struct fdp_ofp_tlv_table cur;
        struct fdp_ofp_tlv_table del = { .command = FDP_NXTTMC_DELETE };
        if (!now || fdp_ofp_tlv_table_from_text(now, &cur)) {
            free(now);
            return FDP_OFPERR_NOMEM;
        }
        free(now);
        for (size_t i = 0; i < cur.n; i++) {
            for (size_t j = 0; j < t.n; j++) {
                if (cur.mappings[i].index == t.mappings[j].index) {
                    del.mappings[del.n++] = cur.mappings[i];
                    break;
                }
            }
        }
        if (!del.n) {
            return FDP_OFPERR_NONE;
        }
        t = del;
    }
    if (t.command == FDP_NXTTMC_ADD) {
        enum fdp_ofperr e = tlv_check_add(s, &t);
        if (e) {
            return e;
        }
    }
    char *text = fdp_ofp_tlv_table_to_text(&t);
    if (!text) {
        return FDP_OFPERR_NOMEM;
    }
    json_t *op = json_pack("{s:s, s:s}", "op", t.command == FDP_NXTTMC_ADD
                           ? "tlv-add" : "tlv-del", "map", text);
    free(text);
    if (!t.n) {
        json_decref(op);
        return FDP_OFPERR_NONE;
    }
    return apply(s, c, op, tlv_error);
}

static void
tlv_request(struct server *s, struct ofconn *c, const uint8_t *msg,
            size_t len, const struct fdp_ofp_header *h)
{
    struct fdp_ofp_tlv_table t = {
        .max_option_space = FDP_TLV_MAP_SPACE,
        .max_fields = FDP_TLV_MAP_FIELDS,
    };
    char *text = fdp_tlv_map_to_text(fdp_pipeline_tlv_map(s->pipeline));
    struct fdp__ofpbuf b;
    int error = !text || fdp_ofp_tlv_table_from_text(text, &t) ? ENOMEM : 0;

    free(text);
    fdp__ofpbuf_init(&b);
    if (!error) {
        error = fdp_ofp_encode_tlv_table(&b, FDP_OFPRAW_NXT_TLV_TABLE_REPLY,
                                         &t, h->version, h->xid);
    }
    send_reply(c, &b, error == EINVAL ? ENOMEM : error, msg, len);
}

/* ---------------------------------------------------------------------- */
/* Conntrack flushes.                                                      */

/* An address of the wire (16 bytes, IPv4 mapped) as the datapath's. */
static void
ct_addr(const uint8_t a[16], bool ipv6, struct fdp_value *v)
{
    if (ipv6) {
        v->hi = fdp__ofp_get_be64(a);
        v->lo = fdp__ofp_get_be64(a + 8);
    } else {
        v->hi = 0;
        v->lo = fdp__ofp_get_be32(a + 12);
    }
}

static void
ct_tuple(const struct fdp_ofp_ct_tuple *w, bool ipv6,
         struct fdp_ct_tuple *t)
{
    ct_addr(w->src, ipv6, &t->src);
    ct_addr(w->dst, ipv6, &t->dst);
    t->src_port = w->src_port;
    t->dst_port = w->dst_port;
    t->icmp_id = w->icmp_id;
    t->icmp_type = w->icmp_type;
    t->icmp_code = w->icmp_code;
}

static enum fdp_ofperr
ct_flush(struct server *s, struct ofconn *c, const uint8_t *msg, size_t len,
         const struct fdp_ofp_header *h)
{
    struct fdp_ct_match match;
    uint16_t zone;
    bool has_zone;
    int error;

    memset(&match, 0, sizeof match);
    if (h->type == FDP_OFPTYPE_CT_FLUSH_ZONE) {
        error = fdp_ofp_decode_ct_flush_zone(msg, len, &zone);
        has_zone = true;
    } else {
        struct fdp_ofp_ct_flush f;
        error = fdp_ofp_decode_ct_flush(msg, len, &f);
        if (!error) {
            match.has_l3 = f.l3 != 0;
            match.ipv6 = f.l3 == 6;
            match.proto = f.ip_proto;
            ct_tuple(&f.orig, match.ipv6, &match.orig);
            ct_tuple(&f.reply, match.ipv6, &match.reply);
            has_zone = f.has_zone;
            zone = f.zone;
        }
    }
    if (error) {
        return (enum fdp_ofperr) error;
    }
    uint32_t n;
    if (fdp_dp_ct_flush(s->dp, has_zone ? &zone : NULL, &match, &n)) {
        return FDP_OFPERR_NOMEM;
    }
    vlog(L_INFO, "%s: conntrack flush: %" PRIu32 " connections removed",
         ofconn_name(c), n);
    return FDP_OFPERR_NONE;
}

/* ---------------------------------------------------------------------- */
/* Dispatch.                                                               */

bool
of_group_dispatch(struct server *s, struct ofconn *c, const uint8_t *msg,
                  size_t len, const struct fdp_ofp_header *h)
{
    enum fdp_ofperr error = FDP_OFPERR_NONE;

    switch (h->type) {
    case FDP_OFPTYPE_GROUP_MOD:
        error = group_mod(s, c, msg, len);
        break;
    case FDP_OFPTYPE_GROUP_STATS_REQUEST:
    case FDP_OFPTYPE_GROUP_DESC_STATS_REQUEST:
        group_stats(s, c, msg, len, h,
                    h->type == FDP_OFPTYPE_GROUP_STATS_REQUEST);
        break;
    case FDP_OFPTYPE_GROUP_FEATURES_STATS_REQUEST:
        group_features(c, msg, len, h);
        break;
    case FDP_OFPTYPE_METER_MOD:
        error = meter_mod(s, c, msg, len);
        break;
    case FDP_OFPTYPE_METER_STATS_REQUEST:
    case FDP_OFPTYPE_METER_CONFIG_STATS_REQUEST:
        meter_stats(s, c, msg, len, h,
                    h->type == FDP_OFPTYPE_METER_STATS_REQUEST);
        break;
    case FDP_OFPTYPE_METER_FEATURES_STATS_REQUEST:
        meter_features(c, msg, len, h);
        break;
    case FDP_OFPTYPE_NXT_TLV_TABLE_MOD:
        error = tlv_mod(s, c, msg, len);
        break;
    case FDP_OFPTYPE_NXT_TLV_TABLE_REQUEST:
        tlv_request(s, c, msg, len, h);
        break;
    case FDP_OFPTYPE_CT_FLUSH_ZONE:
    case FDP_OFPTYPE_CT_FLUSH:
        error = ct_flush(s, c, msg, len, h);
        break;
    default:
        return false;
    }
    if (error) {
        ofconn_send_error(c, error, msg, len);
    }
    return true;
}
