/*
 * A program built the way a user of the installed library builds one:
 *   cc pkgconfig-test.c `pkg-config --static --cflags --libs flowdp`
 * with libflowdp itself linked statically (tests/automake.mk,
 * installcheck-pkgconfig), so that every library libflowdp.a needs must
 * come from flowdp.pc: the urcu flavour, libpcap, libxdp and libbpf when
 * built, libcrypto.  It forwards nothing; it touches the classifier and
 * the datapath (a pcap port, so the pcap code is linked in) and exits 0.
 *
 * usage: pkgconfig-test FILE.pcap   (a capture file it may create)
 */
#include <stdio.h>
#include <stdlib.h>

#include <flowdp/flowdp.h>

int
main(int argc, char *argv[])
{
    struct fdp_flow_spec spec;
    struct fdp_table *table;
    struct fdp_dp *dp;
    char *error = NULL;
    char port[4096];

    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.pcap\n", argv[0]);
        return EXIT_FAILURE;
    }
    snprintf(port, sizeof port, "pcap:tx=%s", argv[1]);
    if (fdp_flow_parse("priority=1,ip,actions=drop", 0, &spec, &error)
        || fdp_table_create(&table)
        || fdp_table_insert(table, &spec, 0)
        || fdp_dp_create(table, NULL, &dp)
        || fdp_dp_port_add(dp, 1, port, &error)) {
        fprintf(stderr, "pkgconfig-test: %s\n", error ? error : "failed");
        return EXIT_FAILURE;
    }
    fdp_dp_destroy(dp);
    fdp_table_destroy(table);
    fdp_flow_spec_destroy(&spec);
    printf("flowdp: linked with pkg-config --static\n");
    return EXIT_SUCCESS;
}
