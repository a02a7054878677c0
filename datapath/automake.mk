# The fast path: packet parsing, descriptor rings, the exact-match cache,
# batch processing, action execution and ports (ring, pcap, AF_PACKET, AF_XDP).  Its objects join
# lib/libflowdp-core.la; datapath/ may include lib/, never the reverse.
lib_libflowdp_core_la_SOURCES += \
	datapath/dp.c \
	datapath/dp-private.h \
	datapath/execute.c \
	datapath/execute.h \
	datapath/extract.c \
	datapath/port.c \
	datapath/port-afpacket.c \
	datapath/port-afxdp.c \
	datapath/ring.c
