# The fast path: packet parsing, descriptor rings (and, as they land, the exact-match cache,
# batch processing, action execution and ports).  Its objects join
# lib/libflowdp-core.la; datapath/ may include lib/, never the reverse.
lib_libflowdp_core_la_SOURCES += \
	datapath/extract.c \
	datapath/ring.c
