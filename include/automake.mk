# The installed, public API: one header per concept.
flowdpincludedir = $(includedir)/flowdp
flowdpinclude_HEADERS = \
	include/flowdp/common.h \
	include/flowdp/cpu.h \
	include/flowdp/flowdp.h \
	include/flowdp/hash.h
