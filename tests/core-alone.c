/*
 * The classifier core links on its own: this program links
 * lib/libflowdp-core.la and nothing from datapath/ (tests/automake.mk), and
 * uses the core as a classifier-only user would: parse a flow, put it in a
 * table, format it back.  With lib/libflowdp-core-alone.la (the whole core
 * linked with every symbol resolved, lib/automake.mk) it is the linker's
 * check that lib/ does not call into datapath/.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flowdp/flow.h"
#include "flowdp/table.h"

int
main(void)
{
    static const char text[] = "priority=5,udp,nw_dst=10.0.0.1,actions=drop";
    struct fdp_flow_spec spec;
    struct fdp_table *table;
    char *error = NULL;

    if (fdp_flow_parse(text, 0, &spec, &error)) {
        fprintf(stderr, "core-alone: %s: %s\n", text, error ? error : "?");
        return EXIT_FAILURE;
    }
    char *back = fdp_flow_format(&spec);
    if (!back || !strstr(back, "nw_dst=10.0.0.1")) {
        fprintf(stderr, "core-alone: %s formats as %s\n", text,
                back ? back : "(null)");
        return EXIT_FAILURE;
    }
    free(back);
    if (fdp_table_create(&table) || fdp_table_insert(table, &spec, 0)) {
        fprintf(stderr, "core-alone: cannot put a flow in a table\n");
        return EXIT_FAILURE;
    }
    fdp_table_destroy(table);
    fdp_flow_spec_destroy(&spec);
    return EXIT_SUCCESS;
}
