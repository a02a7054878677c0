# Tests: Check unit tests (tests/unit/test-<module>.c, one program per
# module, run by automake's test harness) and the GNU autotest suite
# (tests/testsuite.at, run from check-local).  "make check" runs both.

# ---- Check unit tests ----
check_LTLIBRARIES = tests/unit/libunit.la
tests_unit_libunit_la_SOURCES = tests/unit/unit.c tests/unit/unit.h
tests_unit_libunit_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)

UNIT_TESTS = \
	tests/unit/test-actions \
	tests/unit/test-conntrack \
	tests/unit/test-dp-ct \
	tests/unit/test-cpu \
	tests/unit/test-dp \
	tests/unit/test-dp-meter \
	tests/unit/test-ds \
	tests/unit/test-execute \
	tests/unit/test-extract \
	tests/unit/test-flow \
	tests/unit/test-fields \
	tests/unit/test-group \
	tests/unit/test-hash \
	tests/unit/test-ipf \
	tests/unit/test-learn \
	tests/unit/test-live-ports \
	tests/unit/test-match \
	tests/unit/test-other-actions \
	tests/unit/test-meter \
	tests/unit/test-normal \
	tests/unit/test-ofp-actions \
	tests/unit/test-ofp-msgs \
	tests/unit/test-ofp-match \
	tests/unit/test-pipapo \
	tests/unit/test-pipeline \
	tests/unit/test-ring \
	tests/unit/test-table \
	tests/unit/test-ties \
	tests/unit/test-tss \
	tests/unit/test-tunkey \
	tests/unit/test-tunnel \
	tests/unit/test-underlay
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
# The ClassBench rule sets live beside the checkout, in the shared data.
AM_TESTS_ENVIRONMENT = FLOWDP_CLASSBENCH_DIR='$(abs_top_srcdir)/../shared/data/classbench'; export FLOWDP_CLASSBENCH_DIR; FLOWDP_SRCDIR='$(abs_top_srcdir)'; export FLOWDP_SRCDIR;
UNIT_LDADD = tests/unit/libunit.la tests/lib/libflowdp-testlib.la \
	$(FDP_INTERNAL_LIBS) $(CHECK_LIBS) -lpthread

tests_unit_test_dp_SOURCES = tests/unit/test-dp.c
tests_unit_test_dp_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_dp_LDADD = $(UNIT_LDADD)

tests_unit_test_dp_meter_SOURCES = tests/unit/test-dp-meter.c
tests_unit_test_dp_meter_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_dp_meter_LDADD = $(UNIT_LDADD)

tests_unit_test_meter_SOURCES = tests/unit/test-meter.c
tests_unit_test_meter_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_meter_LDADD = $(UNIT_LDADD)

tests_unit_test_tunnel_SOURCES = tests/unit/test-tunnel.c
tests_unit_test_tunnel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tunnel_LDADD = $(UNIT_LDADD)

tests_unit_test_ds_SOURCES = tests/unit/test-ds.c
tests_unit_test_ds_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ds_LDADD = $(UNIT_LDADD)

tests_unit_test_live_ports_SOURCES = tests/unit/test-live-ports.c
tests_unit_test_live_ports_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_live_ports_LDADD = $(UNIT_LDADD)

tests_unit_test_other_actions_SOURCES = tests/unit/test-other-actions.c
tests_unit_test_other_actions_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_other_actions_LDADD = $(UNIT_LDADD)

tests_unit_test_ofp_match_SOURCES = tests/unit/test-ofp-match.c
tests_unit_test_ofp_match_CFLAGS = $(UNIT_CFLAGS) \
	-DFDP_OFP_MATCH_VECTORS='"$(abs_top_srcdir)/tests/ofp-match.vectors"'
tests_unit_test_ofp_match_LDADD = $(UNIT_LDADD)

tests_unit_test_actions_SOURCES = tests/unit/test-actions.c
tests_unit_test_actions_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_actions_LDADD = $(UNIT_LDADD)
tests_unit_test_execute_SOURCES = tests/unit/test-execute.c
tests_unit_test_execute_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_execute_LDADD = $(UNIT_LDADD)

tests_unit_test_conntrack_SOURCES = tests/unit/test-conntrack.c
tests_unit_test_conntrack_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_conntrack_LDADD = $(UNIT_LDADD)
tests_unit_test_learn_SOURCES = tests/unit/test-learn.c
tests_unit_test_learn_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_learn_LDADD = $(UNIT_LDADD)
tests_unit_test_dp_ct_SOURCES = tests/unit/test-dp-ct.c
tests_unit_test_dp_ct_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_dp_ct_LDADD = $(UNIT_LDADD)

tests_unit_test_underlay_SOURCES = tests/unit/test-underlay.c
tests_unit_test_underlay_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_underlay_LDADD = $(UNIT_LDADD)

tests_unit_test_ofp_actions_SOURCES = tests/unit/test-ofp-actions.c
tests_unit_test_ofp_actions_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ofp_actions_LDADD = $(UNIT_LDADD)

tests_unit_test_normal_SOURCES = tests/unit/test-normal.c
tests_unit_test_normal_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_normal_LDADD = $(UNIT_LDADD)

tests_unit_test_ipf_SOURCES = tests/unit/test-ipf.c
tests_unit_test_ipf_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_ipf_LDADD = $(UNIT_LDADD)

tests_unit_test_cpu_SOURCES = tests/unit/test-cpu.c
tests_unit_test_cpu_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_cpu_LDADD = $(UNIT_LDADD)

tests_unit_test_extract_SOURCES = tests/unit/test-extract.c
tests_unit_test_extract_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_extract_LDADD = $(UNIT_LDADD)

tests_unit_test_flow_SOURCES = tests/unit/test-flow.c
tests_unit_test_flow_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_flow_LDADD = $(UNIT_LDADD)

tests_unit_test_match_SOURCES = tests/unit/test-match.c
tests_unit_test_match_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_match_LDADD = $(UNIT_LDADD)

tests_unit_test_pipapo_SOURCES = tests/unit/test-pipapo.c
tests_unit_test_pipapo_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_pipapo_LDADD = $(UNIT_LDADD)

tests_unit_test_pipeline_SOURCES = tests/unit/test-pipeline.c
tests_unit_test_pipeline_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_pipeline_LDADD = $(UNIT_LDADD)

tests_unit_test_ring_SOURCES = tests/unit/test-ring.c
tests_unit_test_ring_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ring_LDADD = $(UNIT_LDADD)

tests_unit_test_table_SOURCES = tests/unit/test-table.c
tests_unit_test_table_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_table_LDADD = $(UNIT_LDADD)

tests_unit_test_fields_SOURCES = tests/unit/test-fields.c
tests_unit_test_fields_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_fields_LDADD = $(UNIT_LDADD)
tests_unit_test_group_SOURCES = tests/unit/test-group.c
tests_unit_test_group_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_group_LDADD = $(UNIT_LDADD)

tests_unit_test_ofp_msgs_SOURCES = tests/unit/test-ofp-msgs.c \
	tests/ofp-msgs/ofp-print-cases.h tests/ofp-msgs/oracle-cases.h
tests_unit_test_ofp_msgs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ofp_msgs_LDADD = $(UNIT_LDADD)

tests_unit_test_tunkey_SOURCES = tests/unit/test-tunkey.c
tests_unit_test_tunkey_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_tunkey_LDADD = $(UNIT_LDADD)
tests_unit_test_ties_SOURCES = tests/unit/test-ties.c
tests_unit_test_ties_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ties_LDADD = $(UNIT_LDADD)

tests_unit_test_tss_SOURCES = tests/unit/test-tss.c
tests_unit_test_tss_CFLAGS = $(UNIT_CFLAGS) $(URCU_CFLAGS)
tests_unit_test_tss_LDADD = $(UNIT_LDADD)

tests_unit_test_hash_SOURCES = tests/unit/test-hash.c
tests_unit_test_hash_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hash_LDADD = $(UNIT_LDADD)

# ---- The core links without the datapath (lib/automake.mk) ----
check_PROGRAMS += tests/core-alone
TESTS += tests/core-alone
tests_core_alone_SOURCES = tests/core-alone.c
tests_core_alone_LDADD = lib/libflowdp-core.la

# ---- flowdp.pc serves a static user (make installcheck, so distcheck) ----
# A program built as the user of the installed library builds one, with
# libflowdp itself linked statically so that every library it needs must
# come from flowdp.pc's Requires.private and Libs.private (configure.ac):
# a wrong urcu flavour or a missing libpcap fails to link here.
EXTRA_DIST += tests/pkgconfig-test.c
installcheck-local: installcheck-pkgconfig
installcheck-pkgconfig:
	$(AM_V_GEN)set -e; dir=tests/pkgconfig-test.dir; \
	PKG_CONFIG_PATH='$(DESTDIR)$(pkgconfigdir)'$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}; \
	export PKG_CONFIG_PATH; \
	test -z '$(DESTDIR)' \
	  || { PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)'; export PKG_CONFIG_SYSROOT_DIR; }; \
	flags=`$(PKG_CONFIG) --static --cflags --libs flowdp`; \
	echo "pkg-config --static --cflags --libs flowdp: $$flags"; \
	flags=`echo " $$flags " \
	  | sed 's/ -lflowdp / -Wl,-Bstatic -lflowdp -Wl,-Bdynamic /'`; \
	rm -rf $$dir; $(MKDIR_P) $$dir; \
	$(CC) -std=gnu11 -Wall -Werror $(FDP_SANITIZER_CFLAGS) \
	  -o $$dir/pkgconfig-test $(srcdir)/tests/pkgconfig-test.c $$flags; \
	$$dir/pkgconfig-test $$dir/out.pcap; \
	rm -rf $$dir
.PHONY: installcheck-pkgconfig

# ---- Autotest suite ----
TESTSUITE_AT = \
	tests/testsuite.at \
	tests/ctl.at \
	tests/ovs-diff.at \
	tests/ct-diff.at \
	tests/acts-diff.at \
	tests/other-actions.at \
	tests/groups.at \
	tests/ct-scenarios.at \
	tests/meters.at \
	tests/tunkey.at \
	tests/normal.at \
	tests/underlay.at \
	tests/flow-syntax.at \
	tests/classify.at \
	tests/datapath.at \
	tests/tunnel.at \
	tests/parse-pcap.at \
	tests/daemon.at \
	tests/openflow.at \
	tests/learn.at \
	tests/ipf.at \
	tests/pipeline.at \
	tests/bench.at \
	tests/netns.at \
	tests/netns-ct.at \
	tests/netns-tunnel.at \
	tests/tunnel-diff.at \
	tests/ofctl-diff.at \
	tests/openflow-controllers.at
TESTSUITE = $(srcdir)/tests/testsuite
AUTOTEST_PATH = utilities:bench
EXTRA_DIST += $(TESTSUITE_AT) $(TESTSUITE) tests/atlocal.in tests/package.m4 \
	tests/flowgen.py tests/ofctl-compare.py tests/classify-gen.py \
	tests/pipeline-gen.py \
	tests/pcapgen.py tests/every-action.flows tests/rpc-raw.py \
	tests/tunnel-gen.py \
	tests/perf-dump.sh tests/ovs-peer.sh tests/ct-diff.py tests/acts-diff.py \
	tests/group-diff.py tests/normal-diff.py tests/underlay.py \
	tests/tunnel-diff.py tests/ofctl-diff.py tests/osken-app.py \
	tests/ct_scenarios.py \
	tests/parse-pcap.sed tests/netns-capture.sh \
	tests/rpc-fuzz.py tests/netns-traffic.py \
	tests/of-raw.py tests/of-controller.py \
	tests/tsan.supp tests/fuzz/fuzz-extract.c tests/fuzz/fuzz-flow-parse.c \
	tests/fuzz/fuzz-tnl-pop.c tests/fuzz/fuzz-ofp-msgs.c \
	tests/ofp-msgs/extract-cases.py tests/ofp-msgs/gen-errors.sh \
	tests/ofp-msgs/gen-oracle.sh \
	tests/fuzz/fuzz-ofp-actions.c \
	tests/ofp-actions-gen.py tests/ofp-actions.data \
	tests/fuzz/fuzz-ofp-match.c \
	tests/ofp-match-gen.py tests/ofp-match.vectors \
	tests/fuzz/corpus
DISTCLEANFILES += tests/atconfig tests/atlocal

AUTOM4TE = autom4te
AUTOTEST = $(AUTOM4TE) -l autotest

$(srcdir)/tests/package.m4: $(top_srcdir)/configure.ac
	$(AM_V_GEN){ \
	  echo '# Signature of the current package.'; \
	  echo 'm4_define([AT_PACKAGE_NAME],      [$(PACKAGE_NAME)])'; \
	  echo 'm4_define([AT_PACKAGE_TARNAME],   [$(PACKAGE_TARNAME)])'; \
	  echo 'm4_define([AT_PACKAGE_VERSION],   [$(PACKAGE_VERSION)])'; \
	  echo 'm4_define([AT_PACKAGE_STRING],    [$(PACKAGE_STRING)])'; \
	  echo 'm4_define([AT_PACKAGE_BUGREPORT], [$(PACKAGE_BUGREPORT)])'; \
	} > $@.tmp && mv $@.tmp $@

$(TESTSUITE): $(srcdir)/tests/package.m4 $(TESTSUITE_AT)
	$(AM_V_GEN)$(AUTOTEST) -I $(srcdir)/tests -o $@.tmp $@.at && mv $@.tmp $@

check-local: tests/atconfig tests/atlocal $(TESTSUITE)
	$(SHELL) '$(TESTSUITE)' -C tests AUTOTEST_PATH='$(AUTOTEST_PATH)' $(TESTSUITEFLAGS)

clean-local:
	test ! -f '$(TESTSUITE)' || $(SHELL) '$(TESTSUITE)' -C tests --clean

# ---- Public headers compile on their own (STYLE.md) ----
check-local: check-headers
check-headers:
	$(AM_V_at)for h in $(flowdpinclude_HEADERS); do \
	  echo "#include <flowdp/$${h##*/}>" \
	    | $(CC) -x c -std=c11 -Wall -Wextra -Werror -fsyntax-only \
	      -I$(top_srcdir)/include - || { echo "$$h does not compile alone"; exit 1; }; \
	done
.PHONY: check-headers
