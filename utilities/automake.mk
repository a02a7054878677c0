# Programs.
bin_PROGRAMS += utilities/flowdp-ctl utilities/flowdp-bench
sbin_PROGRAMS += utilities/flowdpd

# Where flowdpd puts its socket and pidfile unless FLOWDP_RUNDIR says.
FDP_RUNDIR_CPPFLAGS = -DFDP_RUNDIR='"$(localstatedir)/run/flowdp"'

# The control channel (JSON-RPC over unix sockets and mutual TLS), shared
# by the daemon and the CLI.
RPC_SOURCES = utilities/rpc.c utilities/rpc.h
RPC_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(LIBSSL_CFLAGS)
RPC_LIBS = $(JANSSON_LIBS) $(LIBSSL_LIBS) $(LIBCRYPTO_LIBS)

# The pipeline as both present it: tables named by flow text, trace.
PIPELINE_TOOL_SOURCES = utilities/pipeline-tool.c utilities/pipeline-tool.h

utilities_flowdp_ctl_SOURCES = utilities/flowdp-ctl.c utilities/ctl.h \
	utilities/ctl-daemon.c utilities/tool.c utilities/tool.h $(RPC_SOURCES) \
	$(PIPELINE_TOOL_SOURCES)
utilities_flowdp_ctl_LDADD = lib/libflowdp.la $(PCAP_LIBS) $(RPC_LIBS)
utilities_flowdp_ctl_CPPFLAGS = $(AM_CPPFLAGS) $(FDP_RUNDIR_CPPFLAGS)
utilities_flowdp_ctl_CFLAGS = $(RPC_CFLAGS) $(PCAP_CFLAGS)

# flowdpd, split by concern (utilities/flowdpd.h lists its files).  It
# compiles lib/ds.c itself: the installed library exports only the public
# API, and the daemon's JSON text is written with the same growable string
# the library formats flows with.
utilities_flowdpd_SOURCES = utilities/flowdpd.c utilities/flowdpd.h \
	utilities/flowdpd-daemon.c utilities/flowdpd-pmd.c \
	utilities/flowdpd-flows.c \
	utilities/flowdpd-methods.c utilities/flowdpd-dump.c \
	utilities/journal.c utilities/journal.h lib/ds.c lib/ds.h \
	utilities/tool.c utilities/tool.h \
	$(RPC_SOURCES) $(PIPELINE_TOOL_SOURCES)
utilities_flowdpd_LDADD = lib/libflowdp.la $(RPC_LIBS) -lpthread
utilities_flowdpd_CPPFLAGS = $(AM_CPPFLAGS) $(FDP_RUNDIR_CPPFLAGS)
utilities_flowdpd_CFLAGS = $(RPC_CFLAGS)

utilities_flowdp_bench_SOURCES = utilities/flowdp-bench.c utilities/bench.h \
	utilities/bench-table.c utilities/bench-dp.c utilities/bench-veth.c \
	utilities/bench-extract.c utilities/bench-pipeline.c \
	utilities/classbench.c utilities/classbench.h \
	utilities/tool.c utilities/tool.h
# The benchmark links the core statically: it times internal variants
# (each SIMD implementation) that the installed library does not export.
# libbpf (optional) loads the veth cases' XDP programs (bench-veth.c).
utilities_flowdp_bench_LDADD = lib/libflowdp-core.la $(JANSSON_LIBS) \
	$(LIBBPF_LIBS)
utilities_flowdp_bench_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(URCU_CFLAGS) \
	$(LIBBPF_CFLAGS)
utilities_flowdp_bench_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFDP_CLASSBENCH_DIR='"$(abs_top_srcdir)/../shared/data/classbench"'

# The rte_acl peer compiles with DPDK's flags (which name a -march), so it
# sits in its own convenience library.
if HAVE_DPDK
noinst_LTLIBRARIES += utilities/libbench-acl.la
utilities_libbench_acl_la_SOURCES = utilities/bench-acl.c
utilities_libbench_acl_la_CFLAGS = $(AM_CFLAGS) $(DPDK_CFLAGS) -Wno-cast-align \
	-Wno-pedantic -Wno-strict-prototypes -Wno-missing-prototypes
utilities_flowdp_bench_LDADD += utilities/libbench-acl.la $(DPDK_LIBS)
else
EXTRA_DIST += utilities/bench-acl.c
endif

dist_man_MANS = utilities/flowdpd.8 utilities/flowdp-ctl.8

# The Open vSwitch peer (suite peer-ovs, --with-ovs-source=DIR).  Its OVS
# side (bench-ovs-cls.c, bench-ovs-dpcls.c) is compiled with the OVS
# tree's include paths and config.h alone, with OVS's own code-generation
# flags (-fno-strict-aliasing) and warnings, not flowdp's -Werror set: the
# dpcls file compiles the tree's lib/dpif-netdev.c.  Those objects and the
# parts of libopenvswitch they use are linked into one relocatable
# object in which only the bench_ovs_ functions stay global, because OVS
# defines names flowdp-bench and jansson define too (program_name,
# xasprintf, json_object, json_string...).
OVS_PEER_FILES = utilities/bench-ovs-cls.c utilities/bench-ovs-dpcls.c \
	utilities/bench-ovs-peer.h utilities/bench-ovs.h
OVS_PEER_COMPILE = $(CC) -std=gnu11 $(OVS_CPPFLAGS) -I$(top_srcdir) \
	$(CFLAGS) -fno-strict-aliasing -Wall -Wno-sign-compare \
	-Wno-unused-parameter $(FDP_SANITIZER_CFLAGS)
if HAVE_OVS
utilities_flowdp_bench_SOURCES += utilities/bench-ovs.c utilities/bench-ovs.h
utilities_flowdp_bench_LDADD += utilities/ovs-peer.o $(OVS_LIBS)
EXTRA_utilities_flowdp_bench_DEPENDENCIES = utilities/ovs-peer.o
EXTRA_DIST += $(OVS_PEER_FILES)

utilities/bench-ovs-cls.o: $(srcdir)/utilities/bench-ovs-cls.c \
		$(srcdir)/utilities/bench-ovs-peer.h \
		$(srcdir)/utilities/bench-ovs.h $(OVS_ARCHIVES)
	$(AM_V_CC)$(MKDIR_P) utilities && \
	$(OVS_PEER_COMPILE) -c -o $@ $(srcdir)/utilities/bench-ovs-cls.c
utilities/bench-ovs-dpcls.o: $(srcdir)/utilities/bench-ovs-dpcls.c \
		$(srcdir)/utilities/bench-ovs-peer.h \
		$(srcdir)/utilities/bench-ovs.h $(OVS_ARCHIVES)
	$(AM_V_CC)$(MKDIR_P) utilities && \
	$(OVS_PEER_COMPILE) -c -o $@ $(srcdir)/utilities/bench-ovs-dpcls.c
utilities/ovs-peer.o: utilities/bench-ovs-cls.o utilities/bench-ovs-dpcls.o \
		$(OVS_ARCHIVES)
	$(AM_V_GEN)$(LD) -r -o $@.tmp utilities/bench-ovs-cls.o \
		utilities/bench-ovs-dpcls.o --start-group $(OVS_ARCHIVES) \
		--end-group && \
	$(OBJCOPY) -w --keep-global-symbol='bench_ovs_*' $@.tmp $@ && \
	rm -f $@.tmp
CLEANFILES += utilities/bench-ovs-cls.o utilities/bench-ovs-dpcls.o \
	utilities/ovs-peer.o utilities/ovs-peer.o.tmp
else
EXTRA_DIST += utilities/bench-ovs.c $(OVS_PEER_FILES)
endif
