/*
 * flowdpd's methods for NORMAL's learning switch (datapath/normal.c):
 * Open vSwitch's ovs-appctl fdb/show, fdb/flush and fdb/stats-show, the
 * ports' VLAN settings (ovs-vsctl set port P vlan_mode=... tag=...
 * trunks=...), the table's size and aging (other_config:mac-table-size,
 * mac-aging-time) and a clock warp for tests (time/warp).
 *
 * Methods (params -> result):
 *   fdb/show     {}                       -> {text: "<ovs-appctl's table>"}
 *   fdb/flush    {}                       -> {}
 *   fdb/stats    {}                       -> {n_entries, max_entries,
 *                                             aging, n_learned, n_moved,
 *                                             n_expired, n_evicted,
 *                                             n_notes_dropped,
 *                                             n_local_dropped}
 *   fdb/set      {size?:N, aging?:N}      -> {}
 *   fdb/warp     {seconds:N}              -> {}
 *   set-port     {port:N, settings:[TEXT]} -> {vlan: TEXT}
 *                (each "vlan_mode=M", "tag=N" or "trunks=LIST"; an empty
 *                list reads the port's settings without changing them)
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"
#include "utilities/rpc.h"

json_t *
h_fdb_show(struct server *s, const json_t *p, struct op_result *r)
{
    (void) p;
    size_t n = fdp_dp_fdb_dump(s->dp, NULL, 0);
    /* Room for what arrives between the count and the copy. */
    size_t max = n + 64;
    struct fdp_fdb_entry *e = malloc(max * sizeof *e);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    if (!e || !f) {
        free(e);
        if (f) {
            fclose(f);
        }
        free(text);
        op_fail(r, RPC_FAILED, "out of memory");
        return NULL;
    }
    n = fdp_dp_fdb_dump(s->dp, e, max);
    fputs(" port  VLAN  MAC                Age\n", f);
    for (size_t i = 0; i < n && i < max; i++) {
        const uint8_t *m = e[i].mac;
        char port[12];
        snprintf(port, sizeof port, "%" PRIu32, e[i].port);
        fprintf(f, "%5s  %4u  %02x:%02x:%02x:%02x:%02x:%02x  %3" PRIu32 "\n",
                port, e[i].vlan, m[0], m[1], m[2], m[3], m[4], m[5],
                e[i].age);
    }
    fclose(f);
    free(e);
    json_t *o = json_pack("{s:s}", "text", text ? text : "");
    free(text);
    if (!o) {
        op_fail(r, RPC_FAILED, "out of memory");
    }
    return o;
}

json_t *
h_fdb_flush(struct server *s, const json_t *p, struct op_result *r)
{
    (void) p;
    (void) r;
    fdp_dp_fdb_flush(s->dp);
    vlog(L_INFO, "fdb flushed");
    return json_object();
}

json_t *
h_fdb_stats(struct server *s, const json_t *p, struct op_result *r)
{
    struct fdp_fdb_stats st;

    (void) p;
    (void) r;
    fdp_dp_fdb_get_stats(s->dp, &st);
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "n_entries", (json_int_t) st.n_entries,
                     "max_entries", (json_int_t) st.max_entries,
                     "aging", (json_int_t) st.aging,
                     "n_learned", (json_int_t) st.n_learned,
                     "n_moved", (json_int_t) st.n_moved,
                     "n_expired", (json_int_t) st.n_expired,
                     "n_evicted", (json_int_t) st.n_evicted,
                     "n_notes_dropped", (json_int_t) st.n_notes_dropped,
                     "n_local_dropped", (json_int_t) st.n_local_dropped);
}

/* 'name', if present: an integer from 0 to 'max' (the callee checks its
 * own range and names it). */
static int
opt_u32(const json_t *p, const char *name, uint32_t max,
        struct op_result *r, bool *given, uint32_t *value)
{
    const json_t *v = json_object_get(p, name);

    *given = v != NULL;
    if (!v) {
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0
        || json_integer_value(v) > max) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected a number "
                       "from 0 to %" PRIu32, name, max);
    }
    *value = (uint32_t) json_integer_value(v);
    return 0;
}

json_t *
h_fdb_set(struct server *s, const json_t *p, struct op_result *r)
{
    bool has_size, has_aging;
    uint32_t size = 0, aging = 0;

    if (opt_u32(p, "size", UINT32_MAX, r, &has_size, &size)
        || opt_u32(p, "aging", UINT32_MAX, r, &has_aging, &aging)) {
        return NULL;
    }
    if (has_size) {
        int error = fdp_dp_fdb_set_size(s->dp, size);
        if (error) {
            op_fail(r, RPC_FAILED, "mac-table-size=%" PRIu32 ": %s", size,
                    error == EINVAL ? "out of range (16 to 4194304)"
                                    : strerror(error));
            return NULL;
        }
        vlog(L_INFO, "fdb: mac-table-size=%" PRIu32, size);
    }
    if (has_aging) {
        int error = fdp_dp_fdb_set_aging(s->dp, aging);
        if (error) {
            op_fail(r, RPC_FAILED, "mac-aging-time=%" PRIu32 ": %s", aging,
                    error == EINVAL ? "out of range (1 to 86400 seconds)"
                                    : strerror(error));
            return NULL;
        }
        vlog(L_INFO, "fdb: mac-aging-time=%" PRIu32, aging);
    }
    return json_object();
}

json_t *
h_fdb_warp(struct server *s, const json_t *p, struct op_result *r)
{
    bool given;
    uint32_t seconds = 0;

    if (opt_u32(p, "seconds", 86400 * 365, r, &given, &seconds)) {
        return NULL;
    }
    if (!given || !seconds) {
        op_fail(r, RPC_INVALID_PARAMS, "\"seconds\": expected a number "
                "from 1 up");
        return NULL;
    }
    fdp_dp_fdb_warp(s->dp, seconds);
    return json_object();
}

/* Applies the settings 'words' (a JSON array of strings, may be NULL) to
 * 'cfg'.  Returns 0 or fails 'r'. */
int
normal_vlan_params(const json_t *words, struct fdp_port_vlan *cfg,
                   struct op_result *r)
{
    if (words && !json_is_array(words)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"settings\": expected an "
                       "array of strings");
    }
    for (size_t i = 0; i < json_array_size(words); i++) {
        const char *w = json_string_value(json_array_get(words, i));
        char *msg = NULL;
        if (!w) {
            return op_fail(r, RPC_INVALID_PARAMS, "\"settings\"[%zu]: "
                           "expected a string", i);
        }
        if (fdp_port_vlan_parse(cfg, w, &msg)) {
            op_fail(r, RPC_INVALID_PARAMS, "%s", msg ? msg : w);
            free(msg);
            return EINVAL;
        }
    }
    return 0;
}

json_t *
h_set_port(struct server *s, const json_t *p, struct op_result *r)
{
    const json_t *v = json_object_get(p, "port");
    const json_t *words = json_object_get(p, "settings");
    struct fdp_port_vlan cfg;
    char text[512];

    if (!json_is_integer(v) || json_integer_value(v) < 1
        || json_integer_value(v) > 0xfeff) {
        op_fail(r, RPC_INVALID_PARAMS, "\"port\": expected a port number "
                "from 1 to 65279");
        return NULL;
    }
    uint32_t port = (uint32_t) json_integer_value(v);
    if (fdp_dp_port_get_vlan(s->dp, port, &cfg)) {
        op_fail(r, RPC_FAILED, "port %" PRIu32 ": no such port", port);
        return NULL;
    }
    if (normal_vlan_params(words, &cfg, r)) {
        return NULL;
    }
    if (json_array_size(words)) {
        int error = fdp_dp_port_set_vlan(s->dp, port, &cfg);
        if (error) {
            op_fail(r, RPC_FAILED, "port %" PRIu32 ": %s", port,
                    error == ENOENT ? "no such port" : strerror(error));
            return NULL;
        }
        fdp_port_vlan_format(&cfg, text, sizeof text);
        vlog(L_INFO, "port %" PRIu32 ": %s", port, text);
    }
    fdp_port_vlan_format(&cfg, text, sizeof text);
    return json_pack("{s:s}", "vlan", text);
}

void
normal_trace(struct server *s, const struct fdp_key *key, json_t *trace)
{
    const char *actions = json_string_value(json_object_get(trace,
                                                            "actions"));
    char text[256];

    /* NORMAL prints as itself in the composed actions, and only there:
     * a resubmit or an output to a port never reads "NORMAL". */
    if (!actions || !strstr(actions, "NORMAL")) {
        return;
    }
    fdp_dp_normal_explain(s->dp, key, text, sizeof text);
    json_object_set_new(trace, "normal", json_string(text));
}
