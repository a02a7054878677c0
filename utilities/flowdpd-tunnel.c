/*
 * flowdpd's part of tunnels (datapath/port-tunnel.c): what "trace" says
 * about the outputs to tunnel ports, as Open vSwitch's ofproto/trace
 * prints its "native tunnel push" lines.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utilities/flowdpd.h"

/* The key a trace pass ended with ("final_key": its words in hex), or
 * false if the pass has none. */
static bool
final_key(const json_t *pass, struct fdp_key *key)
{
    const json_t *words = json_object_get(pass, "final_key");

    if (json_array_size(words) != FDP_KEY_WORDS) {
        return false;
    }
    for (size_t w = 0; w < FDP_KEY_WORDS; w++) {
        const char *hex = json_string_value(json_array_get(words, w));
        if (!hex) {
            return false;
        }
        key->w[w] = strtoull(hex, NULL, 16);
    }
    return true;
}

/* Adds "tunnels" to one pass of a trace. */
static void
pass_tunnels(struct server *s, json_t *pass)
{
    const json_t *outs = json_object_get(pass, "outputs");
    json_t *lines = NULL;
    struct fdp_key key;

    if (!json_array_size(outs) || !final_key(pass, &key)) {
        return;
    }
    for (size_t i = 0; i < json_array_size(outs); i++) {
        json_int_t port = json_integer_value(json_array_get(outs, i));
        char text[512];
        if (port <= 0 || port > UINT32_MAX
            || fdp_dp_tunnel_explain(s->dp, (uint32_t) port, &key, text,
                                     sizeof text)) {
            continue;           /* Not a tunnel port. */
        }
        if (!lines) {
            lines = json_array();
        }
        json_array_append_new(lines, json_string(text));
    }
    if (lines) {
        json_object_set_new(pass, "tunnels", lines);
    }
}

void
tunnel_trace(struct server *s, const struct fdp_key *key, json_t *trace)
{
    json_t *resumes = json_object_get(trace, "resumes");

    (void) key;
    pass_tunnels(s, trace);
    for (size_t i = 0; i < json_array_size(resumes); i++) {
        pass_tunnels(s, json_array_get(resumes, i));
    }
}
