# Programs.
bin_PROGRAMS += utilities/flowdp-ctl
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
	utilities/ctl-daemon.c utilities/ctl-ct.c utilities/ctl-groups.c \
	utilities/ctl-meters.c utilities/ctl-normal.c utilities/ctl-tlv.c \
	utilities/ctl-underlay.c utilities/ctl-openflow.c \
	utilities/tool.c \
	utilities/tool.h $(RPC_SOURCES) \
	$(PIPELINE_TOOL_SOURCES)
utilities_flowdp_ctl_LDADD = lib/libflowdp.la $(PCAP_LIBS) $(RPC_LIBS)
utilities_flowdp_ctl_CPPFLAGS = $(AM_CPPFLAGS) $(FDP_RUNDIR_CPPFLAGS)
utilities_flowdp_ctl_CFLAGS = $(RPC_CFLAGS) $(PCAP_CFLAGS)

# flowdpd, split by concern (utilities/flowdpd.h lists its files).  It
# links the library's objects statically (FDP_INTERNAL_LIBS) rather than
# the installed library, which exports only the public API: the daemon
# writes its JSON text with the library's growable string (lib/ds.c) and
# speaks OpenFlow through the codec (lib/ofp-*.c), both internal.
utilities_flowdpd_SOURCES = utilities/flowdpd.c utilities/flowdpd.h \
	utilities/flowdpd-daemon.c utilities/flowdpd-pmd.c \
	utilities/flowdpd-flows.c \
	utilities/flowdpd-methods.c utilities/flowdpd-dump.c \
	utilities/flowdpd-ipf.c \
	utilities/flowdpd-normal.c \
	utilities/flowdpd-underlay.c \
	utilities/flowdpd-tunnel.c \
	utilities/flowdpd-ct.c \
	utilities/flowdpd-groups.c \
	utilities/flowdpd-meters.c \
	utilities/flowdpd-tlv.c \
	utilities/flowdpd-ofconn.c utilities/flowdpd-openflow.c \
	utilities/flowdpd-ofgroup.c \
	utilities/flowdpd-ofpin.c \
	utilities/flowdpd-openflow.h \
	utilities/journal.c utilities/journal.h \
	utilities/tool.c utilities/tool.h \
	$(RPC_SOURCES) $(PIPELINE_TOOL_SOURCES)
utilities_flowdpd_LDADD = $(FDP_INTERNAL_LIBS) $(RPC_LIBS) -lpthread
utilities_flowdpd_CPPFLAGS = $(AM_CPPFLAGS) $(FDP_RUNDIR_CPPFLAGS)
utilities_flowdpd_CFLAGS = $(RPC_CFLAGS)

dist_man_MANS = utilities/flowdpd.8 utilities/flowdp-ctl.8
