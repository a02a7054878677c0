# flowdp-bench: the benchmarks.
# Built by "make" for the build tree only, never installed.
noinst_PROGRAMS += bench/flowdp-bench

bench_flowdp_bench_SOURCES = bench/flowdp-bench.c bench/bench.h \
	bench/bench-table.c bench/bench-dp.c bench/bench-veth.c \
	bench/bench-extract.c bench/bench-pipeline.c bench/bench-group.c \
	bench/bench-meter.c \
	bench/bench-ct.c bench/bench-ct-packets.c bench/bench-ct-packets.h \
	bench/bench-learn.c \
	bench/bench-normal.c \
	bench/bench-tunnel.c \
	bench/bench-openflow.c bench/bench-openflow-pktin.c \
	bench/bench-openflow-floor.c \
	utilities/tool.c utilities/tool.h
# The benchmark links the core and the datapath statically: it times internal variants
# (each SIMD implementation) that the installed library does not export.
# libbpf (optional) loads the veth cases' XDP programs (bench-veth.c).
bench_flowdp_bench_LDADD = tests/lib/libflowdp-testlib.la $(FDP_INTERNAL_LIBS) \
	$(JANSSON_LIBS) \
	$(LIBBPF_LIBS)
bench_flowdp_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(URCU_CFLAGS) \
	$(LIBBPF_CFLAGS)
# No path is compiled in: the ClassBench sets are found at run time
# (--classbench-dir, FLOWDP_CLASSBENCH_DIR, or tests/lib/classbench.c's
# search beside the checkout).

# The rte_acl peer compiles with DPDK's flags (which name a -march), so it
# sits in its own convenience library.
if HAVE_DPDK
noinst_LTLIBRARIES += bench/libbench-acl.la
bench_libbench_acl_la_SOURCES = bench/bench-acl.c
bench_libbench_acl_la_CFLAGS = $(AM_CFLAGS) $(DPDK_CFLAGS) -Wno-cast-align \
	-Wno-pedantic -Wno-strict-prototypes -Wno-missing-prototypes
bench_flowdp_bench_LDADD += bench/libbench-acl.la $(DPDK_LIBS)
else
EXTRA_DIST += bench/bench-acl.c
endif

# The Open vSwitch peer (suite peer-ovs, --with-ovs-source=DIR).  Its OVS
# side (bench-ovs-cls.c, bench-ovs-dpcls.c) is compiled with the OVS
# tree's include paths and config.h alone, with OVS's own code-generation
# flags (-fno-strict-aliasing) and warnings, not flowdp's -Werror set: the
# dpcls file compiles the tree's lib/dpif-netdev.c.  Those objects and the
# parts of libopenvswitch they use are linked into one relocatable
# object in which only the bench_ovs_ functions stay global, because OVS
# defines names flowdp-bench and jansson define too (program_name,
# xasprintf, json_object, json_string...).
OVS_PEER_FILES = bench/bench-ovs-cls.c bench/bench-ovs-dpcls.c \
	bench/bench-ovs-ct.c bench/bench-ovs-peer.h bench/bench-ovs.h
OVS_PEER_COMPILE = $(CC) -std=gnu11 $(OVS_CPPFLAGS) -I$(top_srcdir) \
	$(CFLAGS) -fno-strict-aliasing -Wall -Wno-sign-compare \
	-Wno-unused-parameter $(FDP_SANITIZER_CFLAGS)
if HAVE_OVS
bench_flowdp_bench_SOURCES += bench/bench-ovs.c bench/bench-ovs.h
bench_flowdp_bench_LDADD += bench/ovs-peer.o $(OVS_LIBS)
EXTRA_bench_flowdp_bench_DEPENDENCIES = bench/ovs-peer.o
EXTRA_DIST += $(OVS_PEER_FILES)

bench/bench-ovs-cls.o: $(srcdir)/bench/bench-ovs-cls.c \
		$(srcdir)/bench/bench-ovs-peer.h \
		$(srcdir)/bench/bench-ovs.h $(srcdir)/bench/bench-ct-packets.h \
		$(OVS_ARCHIVES)
	$(AM_V_CC)$(MKDIR_P) bench && \
	$(OVS_PEER_COMPILE) -c -o $@ $(srcdir)/bench/bench-ovs-cls.c
bench/bench-ovs-dpcls.o: $(srcdir)/bench/bench-ovs-dpcls.c \
		$(srcdir)/bench/bench-ovs-peer.h \
		$(srcdir)/bench/bench-ovs.h $(srcdir)/bench/bench-ct-packets.h \
		$(OVS_ARCHIVES)
	$(AM_V_CC)$(MKDIR_P) bench && \
	$(OVS_PEER_COMPILE) -c -o $@ $(srcdir)/bench/bench-ovs-dpcls.c
# The conntrack side includes bench-ct-packets.h, which needs only the C
# library, for the frames' layout.
bench/bench-ovs-ct.o: $(srcdir)/bench/bench-ovs-ct.c \
		$(srcdir)/bench/bench-ovs-peer.h $(srcdir)/bench/bench-ovs.h \
		$(srcdir)/bench/bench-ct-packets.h $(OVS_ARCHIVES)
	$(AM_V_CC)$(MKDIR_P) bench && \
	$(OVS_PEER_COMPILE) -c -o $@ $(srcdir)/bench/bench-ovs-ct.c
bench/ovs-peer.o: bench/bench-ovs-cls.o bench/bench-ovs-dpcls.o \
		bench/bench-ovs-ct.o $(OVS_ARCHIVES)
	$(AM_V_GEN)$(LD) -r -o $@.tmp bench/bench-ovs-cls.o \
		bench/bench-ovs-dpcls.o bench/bench-ovs-ct.o \
		--start-group $(OVS_ARCHIVES) --end-group && \
	$(OBJCOPY) -w --keep-global-symbol='bench_ovs_*' $@.tmp $@ && \
	rm -f $@.tmp
CLEANFILES += bench/bench-ovs-cls.o bench/bench-ovs-dpcls.o \
	bench/bench-ovs-ct.o bench/ovs-peer.o bench/ovs-peer.o.tmp
else
EXTRA_DIST += bench/bench-ovs.c $(OVS_PEER_FILES)
endif
