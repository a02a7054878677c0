# The fast path: packet parsing, descriptor rings, the exact-match cache,
# batch processing, action execution and ports (ring, pcap, AF_PACKET,
# AF_XDP), in its own convenience library, compiled with libpcap's and
# libxdp's flags (lib/ is not).  Its objects join lib/libflowdp.la beside
# the core's (lib/automake.mk); datapath/ may include lib/, never the
# reverse.
noinst_LTLIBRARIES += datapath/libflowdp-datapath.la
FDP_DATAPATH_CFLAGS = $(FDP_LIB_CFLAGS) $(PCAP_CFLAGS) $(XDP_CFLAGS)
datapath_libflowdp_datapath_la_CFLAGS = $(FDP_DATAPATH_CFLAGS)
datapath_libflowdp_datapath_la_SOURCES = \
	datapath/bytes.h \
	datapath/conntrack.c \
	datapath/conntrack.h \
	datapath/conntrack-private.h \
	datapath/conntrack-tcp.c \
	datapath/ct-sweeper.c \
	datapath/ct-sweeper.h \
	datapath/learner.c \
	datapath/learner.h \
	datapath/dp.c \
	datapath/tun-intern.c \
	datapath/tun-intern.h \
	datapath/dp-ct.c \
	datapath/dp-private.h \
	datapath/execute.c \
	datapath/execute.h \
	datapath/extract.c \
	datapath/extract-impl.h \
	datapath/extract-internal.h \
	datapath/ipf.c \
	datapath/ipf.h \
	datapath/meter.c \
	datapath/meter.h \
	datapath/mac-learning.c \
	datapath/mac-learning.h \
	datapath/normal.c \
	datapath/normal.h \
	datapath/port.c \
	datapath/port-afpacket.c \
	datapath/port-afxdp.c \
	datapath/port-offload.c \
	datapath/port-offload.h \
	datapath/port-tunnel.c \
	datapath/ring.c \
	datapath/tnl-header.c \
	datapath/tnl-header.h \
	datapath/tunnel.h \
	datapath/underlay.c \
	datapath/underlay.h
datapath_libflowdp_datapath_la_LIBADD = $(PCAP_LIBS) $(XDP_LIBS)

# The parser with the CRC32C hash in line, compiled with the SSE4.2 flags
# of lib/libflowdp-sse42.la in a library of its own.
if FDP_HAVE_SSE42
noinst_LTLIBRARIES += datapath/libflowdp-datapath-sse42.la
datapath_libflowdp_datapath_sse42_la_CFLAGS = $(FDP_DATAPATH_CFLAGS) \
	-msse4.2 -mpclmul
datapath_libflowdp_datapath_sse42_la_SOURCES = datapath/extract-sse42.c
datapath_libflowdp_datapath_la_LIBADD += datapath/libflowdp-datapath-sse42.la
else
EXTRA_DIST += datapath/extract-sse42.c
endif
