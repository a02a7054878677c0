# libflowdp: the classifier core (lib/) and the datapath (datapath/).
#
# The core's objects go into the convenience library lib/libflowdp-core.la,
# the datapath's into datapath/libflowdp-datapath.la (datapath/automake.mk);
# lib/libflowdp.la wraps both as the installed library and exports only
# FDP_API symbols (-fvisibility=hidden).  The unit tests and the benchmarks
# link the two convenience libraries directly (FDP_INTERNAL_LIBS: they reach
# fdp__ internals).  Code for newer instruction sets lives in its own files,
# each built in its own convenience library with its own flags, so nothing
# else is compiled for more than baseline x86-64.
#
# The core is compiled without the datapath's flags (libpcap, libxdp) and
# linked on its own into lib/libflowdp-core-alone.la with every symbol
# resolved (tests/automake.mk): a lib/ file that calls into datapath/ fails
# to link there.  datapath/ may call lib/, never the reverse.

lib_LTLIBRARIES += lib/libflowdp.la
noinst_LTLIBRARIES += lib/libflowdp-core.la

FDP_LIB_CFLAGS = $(AM_CFLAGS) $(FDP_VISIBILITY_CFLAGS) $(LIBCRYPTO_CFLAGS) \
	$(URCU_CFLAGS)

lib_libflowdp_core_la_CFLAGS = $(FDP_LIB_CFLAGS)
lib_libflowdp_core_la_SOURCES = \
	lib/actions.c \
	lib/actions-internal.h \
	lib/cpu.c \
	lib/cpu-internal.h \
	lib/ct-action.c \
	lib/other-actions.c \
	lib/other-actions.h \
	lib/ct-action.h \
	lib/learn.c \
	lib/learn.h \
	lib/cut.c \
	lib/cut.h \
	lib/hash.c \
	lib/hash-internal.h \
	lib/hmap.c \
	lib/hmap.h \
	lib/hash-private.h \
	lib/ds.c \
	lib/ds.h \
	lib/field.h \
	lib/field-map.h \
	lib/flow-format.c \
	lib/flow-parse.c \
	lib/flow-text.h \
	lib/group.c \
	lib/group.h \
	lib/key.c \
	lib/lines.c \
	lib/lines.h \
	lib/match.c \
	lib/meter-text.c \
	lib/outcome.h \
	lib/pipeline.c \
	lib/tlv-map.c \
	lib/tun-md-text.c \
	lib/tlv-map.h \
	lib/ofp-common.h \
	lib/ofp-ctrl.c \
	lib/ofp-errors.inc \
	lib/ofp-msgs.c \
	lib/ofp-msgs.h \
	lib/ofp-packet.c \
	lib/ofp-flow.c \
	lib/ofp-group.c \
	lib/ofp-match.c \
	lib/ofp-match.h \
	lib/ofp-actions.h \
	lib/ofp-actions.c \
	lib/match-internal.h \
	lib/pipeline-private.h \
	lib/pipeline-view.h \
	lib/pipapo.c \
	lib/pipapo.h \
	lib/pipapo-step.h \
	lib/rcu.c \
	lib/rcu.h \
	lib/rule.h \
	lib/subtable.h \
	lib/table.c \
	lib/ties.c \
	lib/ties.h \
	lib/tss.c \
	lib/tss.h \
	lib/tss-private.h \
	lib/util.h
lib_libflowdp_core_la_LIBADD = $(LIBCRYPTO_LIBS) $(URCU_LIBS)

if FDP_HAVE_SSE42
noinst_LTLIBRARIES += lib/libflowdp-sse42.la
lib_libflowdp_sse42_la_CFLAGS = $(FDP_LIB_CFLAGS) -msse4.2 -mpclmul
lib_libflowdp_sse42_la_SOURCES = lib/hash-sse42.c lib/tss-sse42.c
lib_libflowdp_core_la_LIBADD += lib/libflowdp-sse42.la
endif

if FDP_HAVE_AVX2
noinst_LTLIBRARIES += lib/libflowdp-avx2.la
lib_libflowdp_avx2_la_CFLAGS = $(FDP_LIB_CFLAGS) -mavx2
lib_libflowdp_avx2_la_SOURCES = lib/cut-avx2.c lib/pipapo-avx2.c
lib_libflowdp_core_la_LIBADD += lib/libflowdp-avx2.la
endif

lib_libflowdp_la_SOURCES =
lib_libflowdp_la_LIBADD = datapath/libflowdp-datapath.la lib/libflowdp-core.la
lib_libflowdp_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(FLOWDP_LT_VERSION) -no-undefined


# The core alone, linked as a shared object that must resolve every symbol
# (-Wl,--no-undefined; libtool's -no-undefined says so only on Windows):
# whole, not just what a program happens to use, so any lib/ object that
# calls a datapath/ function fails "make" here.  Built, never installed
# (-rpath only makes libtool build a shared object).
noinst_LTLIBRARIES += lib/libflowdp-core-alone.la
lib_libflowdp_core_alone_la_SOURCES =
lib_libflowdp_core_alone_la_LIBADD = lib/libflowdp-core.la
lib_libflowdp_core_alone_la_LDFLAGS = $(AM_LDFLAGS) -rpath $(abs_builddir) \
	-Wl,--no-undefined

# What a program that reaches internals links, in link order.
FDP_INTERNAL_LIBS = datapath/libflowdp-datapath.la lib/libflowdp-core.la

EXTRA_DIST += lib/flowdp.pc.in
DISTCLEANFILES += lib/flowdp.pc
