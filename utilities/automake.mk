# Programs.
bin_PROGRAMS += utilities/flowdp-ctl utilities/flowdp-bench

utilities_flowdp_ctl_SOURCES = utilities/flowdp-ctl.c utilities/tool.c utilities/tool.h
utilities_flowdp_ctl_LDADD = lib/libflowdp.la $(PCAP_LIBS)
utilities_flowdp_ctl_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)

utilities_flowdp_bench_SOURCES = utilities/flowdp-bench.c utilities/tool.c \
	utilities/tool.h
# The benchmark links the core statically: it times internal variants
# (each SIMD implementation) that the installed library does not export.
utilities_flowdp_bench_LDADD = lib/libflowdp-core.la $(JANSSON_LIBS)
utilities_flowdp_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(URCU_CFLAGS)
