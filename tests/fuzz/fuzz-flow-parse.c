/*
 * libFuzzer target: the flow text parser (lib/flow-parse.c).  An input
 * that parses must format to text that parses back to the same flow.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <flowdp/flow.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct fdp_flow_spec flow, again;
    char *error = NULL;

    if (!text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (!fdp_flow_parse(text, 0, &flow, &error)) {
        char *s = fdp_flow_format(&flow);
        if (!s || fdp_flow_parse(s, 0, &again, NULL)) {
            abort();            /* Canonical text must parse. */
        }
        if (!fdp_match_equal(flow.match, again.match)
            || !fdp_actions_equal(flow.actions, again.actions)
            || flow.priority != again.priority
            || flow.cookie != again.cookie) {
            abort();            /* ...to the same flow. */
        }
        fdp_flow_spec_destroy(&again);
        fdp_flow_spec_destroy(&flow);
        free(s);
    } else if (!error || strncmp(error, "column ", 7)) {
        /* Every rejection names a column (or is out of memory). */
        if (error) {
            abort();
        }
    }
    free(error);

    struct fdp_key key;
    error = NULL;
    fdp_packet_parse(text, &key, &error);
    free(error);
    free(text);
    return 0;
}
