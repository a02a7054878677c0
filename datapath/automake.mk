# The fast path: packet parsing, descriptor rings, the exact-match cache,
# batch processing, action execution and ports (ring, pcap, AF_PACKET, AF_XDP).  Its objects join
# lib/libflowdp-core.la; datapath/ may include lib/, never the reverse.
lib_libflowdp_core_la_SOURCES += \
	datapath/dp.c \
	datapath/dp-private.h \
	datapath/execute.c \
	datapath/execute.h \
	datapath/extract.c \
	datapath/extract-internal.h \
	datapath/port.c \
	datapath/port-afpacket.c \
	datapath/port-afxdp.c \
	datapath/port-offload.c \
	datapath/port-offload.h \
	datapath/ring.c
lib_libflowdp_core_la_SOURCES += datapath/extract-impl.h
# The parser with the CRC32C hash in line joins the SSE4.2 library
# (lib/automake.mk), compiled with that library's flags.
if FDP_HAVE_SSE42
lib_libflowdp_sse42_la_SOURCES += datapath/extract-sse42.c
else
EXTRA_DIST += datapath/extract-sse42.c
endif
