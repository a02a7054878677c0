# The installed, public API: one header per concept.
flowdpincludedir = $(includedir)/flowdp
flowdpinclude_HEADERS = \
	include/flowdp/common.h \
	include/flowdp/actions.h \
	include/flowdp/cpu.h \
	include/flowdp/datapath.h \
	include/flowdp/flow.h \
	include/flowdp/group.h \
	include/flowdp/flowdp.h \
	include/flowdp/hash.h \
	include/flowdp/key.h \
	include/flowdp/match.h \
	include/flowdp/meter.h \
	include/flowdp/normal.h \
	include/flowdp/pipeline.h \
	include/flowdp/ring.h \
	include/flowdp/table.h \
	include/flowdp/underlay.h \
	include/flowdp/tlv-map.h
