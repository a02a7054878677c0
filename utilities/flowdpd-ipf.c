/*
 * flowdpd's fragment reassembly methods: Open vSwitch's ovs-appctl
 * dpctl/ipf-* controls over the datapath's reassembler (datapath/ipf.c),
 * kept apart from the connection tracker's methods.
 *
 * Methods (params -> result):
 *   ipf-set-enabled    {v6:BOOL, enabled:BOOL}      -> {}
 *   ipf-set-min-frag   {v6:BOOL, size:N}            -> {}
 *                      (error under 400 bytes)
 *   ipf-set-max-nfrags {n:N}                        -> {}
 *                      (error above 5000)
 *   ipf-get-status     {}  -> {nfrag, nfrag_max, v4:{...}, v6:{...}},
 *                      each family {enabled, min_frag_size, accepted,
 *                      completed, expired, too_small, overlapped, purged}
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>

#include "utilities/flowdpd.h"
#include "utilities/rpc.h"

/* "v6": a boolean naming the address family. */
static int
family_param(const json_t *p, struct op_result *r, bool *v6)
{
    const json_t *v = json_object_get(p, "v6");

    if (!json_is_boolean(v)) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"v6\": expected true (IPv6) "
                       "or false (IPv4)");
    }
    *v6 = json_is_true(v);
    return 0;
}

/* 'name': an integer from 0 to UINT32_MAX. */
static int
u32_param(const json_t *p, const char *name, struct op_result *r,
          uint32_t *value)
{
    const json_t *v = json_object_get(p, name);

    if (!json_is_integer(v) || json_integer_value(v) < 0
        || json_integer_value(v) > UINT32_MAX) {
        return op_fail(r, RPC_INVALID_PARAMS, "\"%s\": expected a number "
                       "from 0 to %" PRIu32, name, UINT32_MAX);
    }
    *value = (uint32_t) json_integer_value(v);
    return 0;
}

json_t *
h_ipf_set_enabled(struct server *s, const json_t *p, struct op_result *r)
{
    const json_t *enabled = json_object_get(p, "enabled");
    bool v6 = false;

    if (family_param(p, r, &v6)) {
        return NULL;
    }
    if (!json_is_boolean(enabled)) {
        op_fail(r, RPC_INVALID_PARAMS, "\"enabled\": expected a boolean");
        return NULL;
    }
    fdp_dp_ipf_set_enabled(s->dp, v6, json_is_true(enabled));
    return json_object();
}

json_t *
h_ipf_set_min_frag(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t size;
    bool v6 = false;

    if (family_param(p, r, &v6) || u32_param(p, "size", r, &size)) {
        return NULL;
    }
    if (fdp_dp_ipf_set_min_frag(s->dp, v6, size)) {
        op_fail(r, RPC_FAILED, "minimum fragment size %" PRIu32 " is under "
                "the lowest allowed, 400", size);
        return NULL;
    }
    return json_object();
}

json_t *
h_ipf_set_max_nfrags(struct server *s, const json_t *p, struct op_result *r)
{
    uint32_t n;

    if (u32_param(p, "n", r, &n)) {
        return NULL;
    }
    if (fdp_dp_ipf_set_max_nfrags(s->dp, n)) {
        op_fail(r, RPC_FAILED, "maximum fragments %" PRIu32 " is over the "
                "highest allowed, 5000", n);
        return NULL;
    }
    return json_object();
}

static json_t *
proto_json(const struct fdp_dp_ipf_proto_status *ps)
{
    return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "enabled", ps->enabled,
                     "min_frag_size", (json_int_t) ps->min_frag_size,
                     "accepted", (json_int_t) ps->n_accepted,
                     "completed", (json_int_t) ps->n_completed,
                     "expired", (json_int_t) ps->n_expired,
                     "too_small", (json_int_t) ps->n_too_small,
                     "overlapped", (json_int_t) ps->n_overlap,
                     "purged", (json_int_t) ps->n_purged);
}

json_t *
h_ipf_get_status(struct server *s, const json_t *p, struct op_result *r)
{
    struct fdp_dp_ipf_status st;

    (void) p;
    (void) r;
    fdp_dp_ipf_get_status(s->dp, &st);
    return json_pack("{s:I, s:I, s:o, s:o}",
                     "nfrag", (json_int_t) st.nfrag,
                     "nfrag_max", (json_int_t) st.nfrag_max,
                     "v4", proto_json(&st.v4), "v6", proto_json(&st.v6));
}
