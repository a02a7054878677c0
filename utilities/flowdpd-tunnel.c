/*
 * flowdpd's part of tunnels (datapath/port-tunnel.c): what "trace" says
 * about the outputs to tunnel ports, as Open vSwitch's ofproto/trace
 * prints its "native tunnel push" lines.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/actions-internal.h"
#include "utilities/flowdpd.h"

void
tunnel_trace(struct server *s, const struct fdp_key *key, json_t *trace)
{
    struct fdp_pipeline_result r;
    json_t *lines = NULL;

    /* The composition again, for its records and the key as its actions
     * leave it (the tun_* fields a flow set before the output). */
    fdp_pipeline_result_init(&r);
    fdp_table_read_lock();
    int error = fdp_pipeline_classify(s->pipeline, key, 0, &r, NULL, NULL);
    fdp_table_read_unlock();
    if (!error && r.actions && !r.limit_dropped) {
        for (const struct fdp__action *a = fdp__actions_first(r.actions); a;
             a = fdp__actions_next(r.actions, a)) {
            char text[512];
            if (a->type != FDP_ACT_OUTPUT
                || fdp_dp_tunnel_explain(s->dp, a->arg, &r.key, text,
                                         sizeof text)) {
                continue;
            }
            if (!lines) {
                lines = json_array();
            }
            if (lines) {
                json_array_append_new(lines, json_string(text));
            }
        }
    }
    fdp_pipeline_result_destroy(&r);
    if (lines) {
        json_object_set_new(trace, "tunnels", lines);
    }
}
