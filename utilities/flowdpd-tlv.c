/*
 * flowdpd's TLV map: the JSON-RPC methods of ovs-ofctl's add-tlv-map,
 * del-tlv-map and dump-tlv-map, and their journalled operations.
 *
 * Methods (params -> result; MAP is the text ovs-ofctl takes,
 * "{class=C,type=T,len=L}->tun_metadataN[,...]", flowdp/tlv-map.h):
 *   add-tlv-map   {map:MAP}    -> {}
 *   del-tlv-map   {map:MAP?}   -> {}      (no map: every mapping)
 *   dump-tlv-map  {}           -> {text}  (ovs-ofctl's reply body)
 *
 * Changes are operations like the meters' (flowdpd-meters.c): "tlv-add"
 * and "tlv-del", each {op, map:TEXT}, checked against a copy of the map
 * before they are journalled, then made on the pipeline's map
 * (tlv_commit()).  The journal's snapshot holds the map beside the flows
 * ("tlv" in its "add", restored first: the flows' tun_metadataN are
 * parsed through it).  The daemon's flow parser and formatter read
 * tun_metadataN through the pipeline's map (fdp_tlv_map_use_for_text(),
 * called when the pipeline is made).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/tlv-map.h>
#include "utilities/flowdpd.h"
#include "utilities/rpc.h"

/* The "map" text of 'params', or NULL (with 'r' set if it is not a
 * string; '*missing' if absent). */
static const char *
map_param(const json_t *params, bool *missing, struct op_result *r)
{
    const json_t *m = json_object_get(params, "map");

    *missing = !m;
    if (m && !json_is_string(m)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"map\": expected a string");
        return NULL;
    }
    return m ? json_string_value(m) : NULL;
}

/* Makes the change of operation 'op' on 'map'. */
static int
tlv_change(struct fdp_tlv_map *map, const json_t *op, struct op_result *r)
{
    const char *kind = json_string_value(json_object_get(op, "op"));
    bool missing;
    const char *text = map_param(op, &missing, r);
    char *msg = NULL;
    int error;

    if (!text && !missing) {
        return EINVAL;
    }
    if (!strcmp(kind, "tlv-add")) {
        if (missing) {
            return op_fail(r, RPC_INVALID_PARAMS, "\"map\": missing");
        }
        error = fdp_tlv_map_add(map, text, &msg);
    } else {
        error = fdp_tlv_map_del(map, text, &msg);
    }
    if (error) {
        op_fail(r, RPC_FAILED, "%s", msg ? msg : strerror(error));
    }
    free(msg);
    return error;
}

/* What a walk over the flows looks for: a flow whose match names one of
 * the tun_metadata fields a deletion would unmap. */
struct use_walk {
    uint64_t fields;            /* Bit N: tun_metadataN goes. */
    int used;                   /* A field a flow uses, or -1. */
    bool failed;
};

/* True if the match part of flow text 'text' names tun_metadata'n'. */
static bool
names_field(const char *text, unsigned int n)
{
    char name[24];
    const char *end = strstr(text, "actions=");
    size_t len = (size_t) snprintf(name, sizeof name, "tun_metadata%u", n);

    for (const char *p = strstr(text, name); p && (!end || p < end);
         p = strstr(p + 1, name)) {
        bool start = p == text || p[-1] == ',' || p[-1] == ' ';
        char c = p[len];
        if (start && (c == '=' || c == ',' || c == ' ' || !c)) {
            return true;
        }
    }
    return false;
}

static bool
walk_flow(const struct fdp_rule *rule, void *w_)
{
    struct use_walk *w = w_;
    struct fdp_flow_spec spec;

    get_spec(rule, &spec);
    /* The flow's text, printed through the map as it is now, names the
     * fields its match uses. */
    spec.actions = NULL;
    char *text = fdp_flow_format(&spec);
    if (!text) {
        w->failed = true;
        return false;
    }
    for (unsigned int n = 0; n < FDP_TLV_MAP_FIELDS && w->used < 0; n++) {
        if ((w->fields >> n) & 1 && names_field(text, n)) {
            w->used = (int) n;
        }
    }
    free(text);
    return w->used < 0;
}

/* The tun_metadata fields 'map' names (all of them if 'text' is NULL or
 * empty, else those of 'text'), as a bit map. */
static uint64_t
fields_of(const struct fdp_tlv_map *map, const char *text)
{
    uint64_t fields = 0;

    if (text && *text) {
        for (const char *p = strstr(text, "->tun_metadata"); p;
             p = strstr(p + 1, "->tun_metadata")) {
            unsigned long n = strtoul(p + strlen("->tun_metadata"), NULL,
                                      10);
            fields |= n < FDP_TLV_MAP_FIELDS ? UINT64_C(1) << n : 0;
        }
        return fields;
    }
    for (unsigned int n = 0; n < FDP_TLV_MAP_FIELDS; n++) {
        unsigned int offset, len;
        if (fdp_tlv_map_field(map, n, &offset, &len)) {
            fields |= UINT64_C(1) << n;
        }
    }
    return fields;
}

/* As Open vSwitch (OFPERR_NXTTMFC_INVALID_TLV_DEL), a mapping that a flow
 * uses may not be deleted: the flow's bits would be read as whatever the
 * slots are mapped to next. */
static int
check_unused(struct server *s, const json_t *op, struct op_result *r)
{
    const char *text = json_string_value(json_object_get(op, "map"));
    struct use_walk w = {
        .fields = fields_of(fdp_pipeline_tlv_map(s->pipeline), text),
        .used = -1,
    };

    if (!w.fields) {
        return 0;
    }
    fdp_table_read_lock();
    fdp_pipeline_for_each(s->pipeline, FDP_TABLE_ALL, walk_flow, &w);
    fdp_table_read_unlock();
    if (w.failed) {
        return op_fail(r, RPC_FAILED, "out of memory");
    }
    if (w.used >= 0) {
        return op_fail(r, RPC_FAILED, "tun_metadata%d is used by a flow "
                       "(NXTTMFC_INVALID_TLV_DEL)", w.used);
    }
    return 0;
}

/* Checks operation 'op' on a copy of the pipeline's map, so that a change
 * the map refuses is never journalled. */
int
op_tlv(struct server *s, const json_t *op, struct op_result *r)
{
    struct fdp_tlv_map *copy;
    char *text = fdp_tlv_map_to_text(fdp_pipeline_tlv_map(s->pipeline));
    int error = text ? fdp_tlv_map_create(&copy) : ENOMEM;

    if (!error) {
        error = fdp_tlv_map_add(copy, text, NULL);
        if (!error) {
            error = tlv_change(copy, op, r);
            const char *kind = json_string_value(json_object_get(op, "op"));
            if (!error && !strcmp(kind, "tlv-del") && !s->replaying) {
                error = check_unused(s, op, r);
            }
        } else {
            op_fail(r, RPC_FAILED, "copying the TLV map: %s",
                    strerror(error));
        }
        fdp_tlv_map_destroy(copy);
    } else {
        op_fail(r, RPC_FAILED, "out of memory");
    }
    free(text);
    return error;
}

void
tlv_commit(struct server *s, const json_t *op)
{
    struct op_result r = { 0 };

    if (tlv_change(fdp_pipeline_tlv_map(s->pipeline), op, &r)) {
        vlog(L_ERR, "TLV map: journalled but not made: %s",
             r.msg ? r.msg : "?");
    }
    free(r.msg);
}

json_t *
tlv_snapshot(struct server *s)
{
    char *text = fdp_tlv_map_to_text(fdp_pipeline_tlv_map(s->pipeline));
    json_t *j = text ? json_string(text) : NULL;

    free(text);
    return j;
}

int
tlv_restore(struct server *s, const json_t *tlv, struct op_result *r)
{
    char *msg = NULL;

    if (!tlv) {
        return 0;
    }
    if (!json_is_string(tlv) || !s->replaying) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"tlv\": only a journal's "
                       "snapshot holds the TLV map beside flows");
    }
    struct fdp_tlv_map *map = fdp_pipeline_tlv_map(s->pipeline);
    int error = fdp_tlv_map_del(map, NULL, NULL);
    if (!error) {
        error = fdp_tlv_map_add(map, json_string_value(tlv), &msg);
    }
    if (error) {
        op_fail(r, RPC_FAILED, "tlv: %s", msg ? msg : strerror(error));
    }
    free(msg);
    return error;
}

/* Applies the operation 'kind' made of 'params'. */
static json_t *
change(struct server *s, const json_t *params, const char *kind,
       struct op_result *r)
{
    bool missing;
    const char *text = map_param(params, &missing, r);

    if (!text && !missing) {
        return NULL;
    }
    json_t *op = text ? json_pack("{s:s, s:s}", "op", kind, "map", text)
                      : json_pack("{s:s}", "op", kind);
    if (!op) {
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    int error = apply_op(s, op, r);
    json_decref(op);
    return error ? NULL : json_object();
}

json_t *
h_add_tlv_map(struct server *s, const json_t *params, struct op_result *r)
{
    return change(s, params, "tlv-add", r);
}

json_t *
h_del_tlv_map(struct server *s, const json_t *params, struct op_result *r)
{
    return change(s, params, "tlv-del", r);
}

json_t *
h_dump_tlv_map(struct server *s, const json_t *params __attribute__((unused)),
               struct op_result *r)
{
    char *text = fdp_tlv_map_dump(fdp_pipeline_tlv_map(s->pipeline));

    if (!text) {
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    json_t *j = json_pack("{s:s}", "text", text);
    free(text);
    return j;
}
