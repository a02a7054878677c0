# The fast path: packet parsing, descriptor rings, the exact-match cache,
# batch processing, action execution and ports (ring and pcap).  Its objects join
# lib/libflowdp-core.la; datapath/ may include lib/, never the reverse.
lib_libflowdp_core_la_SOURCES += \
	datapath/dp.c \
	datapath/dp-private.h \
	datapath/execute.c \
	datapath/execute.h \
	datapath/extract.c \
	datapath/extract-internal.h \
	datapath/port.c \
	datapath/ring.c
