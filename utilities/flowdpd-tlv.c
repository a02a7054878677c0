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
