/*
 * flowdpd's groups (flowdp/group.h): the group operations, the methods
 * that ask for them, and the ports' liveness that fast-failover groups
 * watch.
 *
 * Groups change as flows do (flowdpd-flows.c): each change is one JSON
 * operation, applied in one pipeline transaction, journalled (--db)
 * before it commits and replayed on start:
 *   {"op": "add-groups", "command": "add"|"modify"|"add_or_mod",
 *    "groups": [TEXT...]}       all or none (add-groups FILE)
 *   {"op": "del-groups", "group_id": N}    (-1: every group; the flows
 *                                          that name a deleted group go
 *                                          with it, in the same operation)
 * and the journal's snapshot, one "add" operation, carries the groups in
 * "groups" before its flows (the flows name them).
 *
 * Methods (params -> result):
 *   add-groups        {groups:[TEXT], command:"add"|"modify"|"add_or_mod"}
 *                                              -> {n}
 *   del-groups        {group:TEXT?}            -> {n: flows removed}
 *   dump-groups       {group:TEXT?, stats:BOOL} -> {text}
 *                     (one line per group, by increasing id: as ovs-ofctl
 *                     dump-groups or, with stats, dump-group-stats prints)
 *   mod-port          {port:N, state:"up"|"down"} -> {}
 *
 * Ports.  A port is live (fdp_pipeline_set_port_live()) from when it is
 * added until it is deleted or set down with mod-port (as ovs-ofctl
 * mod-port SWITCH PORT down); liveness is not journalled, since the ports
 * are not.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/rpc.h"
#include "utilities/tool.h"

static int
command_of(const json_t *op, enum fdp_group_command *cmd,
           struct op_result *r)
{
    const json_t *c = json_object_get(op, "command");
    const char *name = c ? json_string_value(c) : "add";

    if (!name) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"command\": expected "
                       "\"add\", \"modify\" or \"add_or_mod\"");
    }
    if (!strcmp(name, "add")) {
        *cmd = FDP_GROUP_ADD;
    } else if (!strcmp(name, "modify")) {
        *cmd = FDP_GROUP_MODIFY;
    } else if (!strcmp(name, "add_or_mod")) {
        *cmd = FDP_GROUP_ADD_OR_MOD;
    } else {
        return op_fail(r, RPC_INVALID_PARAMS, "\"command\": \"%s\": expected "
                       "\"add\", \"modify\" or \"add_or_mod\"", name);
    }
    return 0;
}

static const char *
group_error(int error)
{
    switch (error) {
    case EEXIST:
        return "a group with that id exists (mod-group changes it)";
    case ENOENT:
        return "no such group (mod-group --may-create adds it)";
    case ELOOP:
        return "its buckets lead back to the group itself";
    default:
        return strerror(error);
    }
}

int
op_add_groups(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *groups = json_object_get(op, "groups");
    enum fdp_group_command cmd = FDP_GROUP_ADD;
    size_t n = json_array_size(groups);

    if (!json_is_array(groups)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"groups\": expected an "
                       "array of group strings");
    }
    if (command_of(op, &cmd, r)) {
        return EINVAL;
    }
    /* Parse them all first: a bad one changes nothing. */
    struct fdp_group **parsed = calloc(n ? n : 1, sizeof *parsed);
    if (!parsed) {
        return op_fail(r, RPC_FAILED, "out of memory");
    }
    int error = 0;
    for (size_t i = 0; i < n && !error; i++) {
        const char *text = json_string_value(json_array_get(groups, i));
        char *msg = NULL;
        if (!text) {
            error = op_fail(r, RPC_INVALID_PARAMS, "groups[%zu]: not a "
                            "string", i);
            break;
        }
        error = fdp_group_parse(text, &parsed[i], &msg);
        if (error) {
            op_fail(r, RPC_INVALID_PARAMS, "groups[%zu]: %s", i,
                    msg ? msg : strerror(error));
        }
        free(msg);
    }
    /* Then add them, in order; the pipeline takes each. */
    for (size_t i = 0; i < n && !error; i++) {
        int e = fdp_pipeline_group_add(s->pipeline, parsed[i], cmd);
        parsed[i] = NULL;
        if (e) {
            error = op_fail(r, RPC_FAILED, "groups[%zu]: %s", i,
                            group_error(e));
        } else {
            r->n++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        fdp_group_destroy(parsed[i]);
    }
    free(parsed);
    return error;
}

int
op_del_groups(struct server *s, const json_t *op, struct op_result *r)
{
    const json_t *v = json_object_get(op, "group_id");
    json_int_t id = json_integer_value(v);

    if (!json_is_integer(v) || id < -1 || id > (json_int_t) FDP_GROUP_MAX) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"group_id\": expected a "
                       "group id, or -1 for every group");
    }
    size_t n_flows = 0;
    int error = fdp_pipeline_group_del(s->pipeline,
                                       id < 0 ? FDP_GROUP_ALL : (uint32_t) id,
                                       &n_flows);
    if (error) {
        return op_fail(r, RPC_FAILED, "%s", strerror(error));
    }
    r->n = n_flows;
    return 0;
}

static bool
collect_group(void *aux, const struct fdp_group *g,
              const struct fdp_group_stats *st)
{
    json_t *texts = aux;
    char *text = st ? fdp_group_stats_format(st, monotonic_ms())
                    : fdp_group_format(g);

    if (!text || json_array_append_new(texts, json_string(text))) {
        free(text);
        return false;
    }
    free(text);
    return true;
}

json_t *
groups_snapshot(struct server *s)
{
    json_t *texts = json_array();

    if (!texts || fdp_pipeline_group_dump(s->pipeline, FDP_GROUP_ALL, false,
                                          collect_group, texts)) {
        json_decref(texts);
        return NULL;
    }
    return texts;
}

/* ---------------------------------------------------------------------- */
/* Methods.                                                                */

static json_t *
run_op(struct server *s, json_t *op, struct op_result *r)
{
    if (!op) {
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    int error = apply_op(s, op, r);
    json_decref(op);
    return error ? NULL : json_pack("{s:I}", "n", (json_int_t) r->n);
}

json_t *
h_add_groups(struct server *s, const json_t *p, struct op_result *r)
{
    json_t *op = json_copy((json_t *) p);

    if (op) {
        json_object_set_new(op, "op", json_string("add-groups"));
    }
    return run_op(s, op, r);
}

/* The "group" selector of del-groups, dump-groups and dump-group-stats,
 * into '*id' (FDP_GROUP_ALL if none). */
static int
group_selector(const json_t *p, uint32_t *id, struct op_result *r)
{
    const json_t *v = json_object_get(p, "group");
    char *msg = NULL;

    *id = FDP_GROUP_ALL;
    if (!v || json_is_null(v)) {
        return 0;
    }
    if (!json_is_string(v)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"group\": expected a "
                       "string");
    }
    int error = fdp_group_parse_id(json_string_value(v), id, &msg);
    if (error) {
        op_fail(r, RPC_INVALID_PARAMS, "group: %s",
                msg ? msg : strerror(error));
    }
    free(msg);
    return error;
}

json_t *
h_del_groups(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t id;

    if (group_selector(p, &id, r)) {
        return NULL;
    }
    return run_op(s, json_pack("{s:s, s:I}", "op", "del-groups", "group_id",
                               id == FDP_GROUP_ALL ? (json_int_t) -1
                                                   : (json_int_t) id), r);
}

json_t *
h_dump_groups(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t id;
    json_t *texts = json_array();

    if (!texts || group_selector(p, &id, r)) {
        json_decref(texts);
        return NULL;
    }
    bool stats = json_is_true(json_object_get(p, "stats"));
    if (fdp_pipeline_group_dump(s->pipeline, id, stats, collect_group,
                                texts)) {
        json_decref(texts);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    return json_pack("{s:o}", "groups", texts);
}

json_t *
h_mod_port(struct server *s, const json_t *p, struct op_result *r)
{
    const json_t *v = json_object_get(p, "port");
    const char *state = json_string_value(json_object_get(p, "state"));
    uint32_t nos[MAX_PORTS];

    if (!json_is_integer(v) || json_integer_value(v) < 1
        || json_integer_value(v) > 0xfeff) {
        op_fail(r, RPC_INVALID_PARAMS, "\"port\": expected a port number "
                "from 1 to 65279");
        return NULL;
    }
    if (!state || (strcmp(state, "up") && strcmp(state, "down"))) {
        op_fail(r, RPC_INVALID_PARAMS, "\"state\": expected \"up\" or "
                "\"down\"");
        return NULL;
    }
    uint32_t port = (uint32_t) json_integer_value(v);
    size_t n = fdp_dp_port_list(s->dp, nos, MAX_PORTS);
    bool exists = false;
    for (size_t i = 0; i < n && i < MAX_PORTS; i++) {
        exists |= nos[i] == port;
    }
    if (!exists) {
        op_fail(r, RPC_FAILED, "port %" PRIu32 ": no such port", port);
        return NULL;
    }
    int error = fdp_pipeline_set_port_live(s->pipeline, port,
                                           !strcmp(state, "up"));
    if (error) {
        op_fail(r, RPC_FAILED, "%s", strerror(error));
        return NULL;
    }
    vlog(L_INFO, "port %" PRIu32 " %s", port, state);
    return json_object();
}

void
groups_port_live(struct server *s, uint32_t port, bool live)
{
    int error = fdp_pipeline_set_port_live(s->pipeline, port, live);

    if (error) {
        vlog(L_WARN, "port %" PRIu32 ": cannot record it %s: %s", port,
             live ? "live" : "gone", strerror(error));
    }
}
