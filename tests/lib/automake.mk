# What the unit tests (tests/unit) and the benchmarks (bench/) share: the
# ring peer, the generator of random inputs, ClassBench loading.  A
# convenience library built by "make" (flowdp-bench needs it) and never
# installed; its users link $(FDP_INTERNAL_LIBS) after it.
noinst_LTLIBRARIES += tests/lib/libflowdp-testlib.la
tests_lib_libflowdp_testlib_la_SOURCES = \
	tests/lib/classbench.c \
	tests/lib/classbench.h \
	tests/lib/peer.c \
	tests/lib/peer.h \
	tests/lib/rng.c \
	tests/lib/rng.h
