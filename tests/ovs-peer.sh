# Open vSwitch as the reference peer of tests/ovs-diff.at (sourced by the
# test's shell, not run).
#
# ovs_peer_unavailable prints why the peer cannot run here (and the test
# skips with that reason); ovs_peer_start runs ovsdb-server and
# ovs-vswitchd with the dummy datapath, everything they write in a
# private directory made by mktemp (mode 0700): database, sockets,
# pidfiles and logs, nothing in the system's /var/run/openvswitch or
# /etc/openvswitch, and no kernel module (--disable-system).  The bridge
# is
#
#     br0: datapath-type=dummy, fail-mode=secure (no NORMAL flow of its
#          own: an empty table drops, as flowdpd's does),
#          OpenFlow 1.0 and 1.3 (ovs-ofctl's default and -O OpenFlow13)
#       p1  type=dummy, ofport 1: packets arrive by
#           "ovs-appctl netdev-dummy/receive p1 HEX"
#       p2  type=dummy, ofport 2: what it sends goes to p2-tx.pcap
#
# ovs_peer_stop ends the two daemons by the pids in their pidfiles (only
# the ones this test started) and removes the directory.  The test's exit
# trap calls it, so that every way out of the test stops them.
#
# Needs no root: ovs-vswitchd with --disable-system opens no netlink
# datapath, and the dummy ports are no system devices.

OVS_SCHEMA=${OVS_SCHEMA:-/usr/share/openvswitch/vswitch.ovsschema}

ovs_peer_unavailable () {
    for tool in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl \
                ovs-ofctl python3; do
        if ! command -v $tool >/dev/null 2>&1; then
            echo "Open vSwitch peer unavailable: $tool is not installed" \
                 "(openvswitch-switch; scripts/install-deps.sh)"
            return 0
        fi
    done
    if test ! -r "$OVS_SCHEMA"; then
        echo "Open vSwitch peer unavailable: no schema at $OVS_SCHEMA" \
             "(openvswitch-switch; scripts/install-deps.sh)"
        return 0
    fi
    return 1
}

# Runs the daemon "$@" with no file descriptor but 0, 1 and 2: Open
# vSwitch's daemons keep what they inherit, and one holding the pipe of
# autotest's log keeps the testsuite waiting for its end after the test.
ovs_peer_daemon () {
    (
        for fd in `ls /proc/self/fd`; do
            test "$fd" -gt 2 && eval "exec $fd>&-"
        done
        exec "$@"
    )
}

# Starts the peer.  On failure prints why (with the end of the logs) and
# returns 1; the caller skips.  Sets and exports OVS_RUNDIR and friends,
# which every ovs-* command of the test then uses: call it in the test's
# own shell (not inside AT_CHECK or AT_SKIP_IF, which run a subshell).
ovs_peer_start () {
    OVS_PEER_DIR=`mktemp -d "${TMPDIR:-/tmp}/flowdp-ovs.XXXXXX"` || {
        echo "Open vSwitch peer unavailable: cannot make a directory in" \
             "${TMPDIR:-/tmp}"
        return 1
    }
    OVS_RUNDIR=$OVS_PEER_DIR OVS_LOGDIR=$OVS_PEER_DIR
    OVS_DBDIR=$OVS_PEER_DIR OVS_SYSCONFDIR=$OVS_PEER_DIR
    OVS_PKGDATADIR=$OVS_PEER_DIR
    export OVS_RUNDIR OVS_LOGDIR OVS_DBDIR OVS_SYSCONFDIR OVS_PKGDATADIR
    cp "$OVS_SCHEMA" "$OVS_PEER_DIR/vswitch.ovsschema"
    if ! {
        ovsdb-tool create "$OVS_PEER_DIR/conf.db" \
                   "$OVS_PEER_DIR/vswitch.ovsschema" &&
        ovs_peer_daemon ovsdb-server --detach --no-chdir --pidfile \
                     --log-file \
                     -vconsole:off --remote="punix:$OVS_PEER_DIR/db.sock" \
                     "$OVS_PEER_DIR/conf.db" &&
        ovs-vsctl --timeout=30 --no-wait init &&
        ovs_peer_daemon ovs-vswitchd --enable-dummy --disable-system \
                     --detach --no-chdir \
                     --pidfile --log-file -vconsole:off &&
        ovs-vsctl --timeout=30 \
            -- add-br br0 \
            -- set bridge br0 datapath-type=dummy fail-mode=secure \
                              protocols=OpenFlow10,OpenFlow13 \
            -- add-port br0 p1 \
            -- set interface p1 type=dummy ofport_request=1 \
            -- add-port br0 p2 \
            -- set interface p2 type=dummy ofport_request=2 \
                                 options:tx_pcap="$OVS_PEER_DIR/p2-tx.pcap"
    } >"$OVS_PEER_DIR/start.log" 2>&1; then
        echo "Open vSwitch peer unavailable: it did not start:"
        tail -n 5 "$OVS_PEER_DIR"/*.log
        return 1
    fi
    return 0
}

ovs_peer_stop () {
    test -n "$OVS_PEER_DIR" && test -d "$OVS_PEER_DIR" || return 0
    stop_status=0
    for daemon in ovs-vswitchd ovsdb-server; do
        pidfile=$OVS_PEER_DIR/$daemon.pid
        if test -f "$pidfile"; then
            pid=`cat "$pidfile"`
            kill "$pid" 2>/dev/null
            # SIGTERM ends either in well under a second; give it 5 s,
            # then SIGKILL and report the failure.
            for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.25
            done
            if kill -0 "$pid" 2>/dev/null; then
                echo "$daemon (pid $pid) ignored SIGTERM: killed"
                kill -9 "$pid" 2>/dev/null
                stop_status=1
            fi
        fi
    done
    # Keep the logs beside the test's files, for a failure's report.
    cp "$OVS_PEER_DIR"/*.log . 2>/dev/null
    rm -rf "$OVS_PEER_DIR"
    OVS_PEER_DIR=
    return $stop_status
}

# ---- Running one command on both sides ----
#
# both CMD [ARG...] runs "ovs-ofctl $OFCTL_PROTOCOL CMD br0 ARG..." against
# ovs-vswitchd and "flowdp-ctl CMD br0 ARG..." against flowdpd (flowdp-ctl
# takes the switch name where ovs-ofctl does), leaving ovs.out, ovs.err,
# ovs.rc and fdp.out, fdp.err, fdp.rc.  OFCTL_PROTOCOL is "-O OpenFlow13"
# unless the caller sets it (to "" for ovs-ofctl's default, OpenFlow 1.0
# with Nicira extensions).  Then it compares the two after
# normalisation (ovs_norm) and prints a diff on disagreement: the exit
# statuses must be equal, and stdout and stderr each equal, line for line,
# or as sets of lines with BOTH_ORDER=any (flow dumps: neither switch's
# order is part of its contract; Open vSwitch's follows its classifier,
# flowdp's the hits).
both () {
    cmd=$1
    shift
    ovs-ofctl ${OFCTL_PROTOCOL--O OpenFlow13} $cmd br0 "$@" >ovs.out 2>ovs.err
    echo $? >ovs.rc
    flowdp-ctl $cmd br0 "$@" >fdp.out 2>fdp.err
    echo $? >fdp.rc
    status=0
    for f in rc out err; do
        if test "$BOTH_ORDER" = any; then
            ovs_norm <ovs.$f | sorted >ovs.$f.norm
            ovs_norm <fdp.$f | sorted >fdp.$f.norm
        else
            ovs_norm <ovs.$f >ovs.$f.norm
            ovs_norm <fdp.$f >fdp.$f.norm
        fi
        if ! cmp -s ovs.$f.norm fdp.$f.norm; then
            echo "$cmd $*: $f differs (- ovs-ofctl, + flowdp-ctl, normalised):"
            diff -u ovs.$f.norm fdp.$f.norm | sed 1,2d
            status=1
        fi
    done
    return $status
}

# What ovs_norm makes equal: what must differ between the two programs,
# and two differences of flowdp-ctl's output (the last two below):
#  - the program's name, and flowdp-ctl's context in an error
#    ("flowdp-ctl: del-flows: column 5: cookie=0x11: "): flowdp's errors
#    name the command, column and token (DESIGN.md), ovs-ofctl's do not;
#  - the name of dump-aggregate's reply, OpenFlow 1.3's
#    "OFPST_AGGREGATE reply (OF1.3)" where flowdp-ctl prints ovs-ofctl's
#    default protocol's "NXST_AGGREGATE reply" (compared as they are with
#    that protocol);
#  - xids: ovs-ofctl numbers the OpenFlow messages of its connection, and
#    how many go before a request depends on the protocol it negotiates
#    (a match makes it set NXM first); flowdp-ctl has no OpenFlow
#    connection.  Open vSwitch's own tests strip them too (STRIP_XIDS);
#  - duration: the two daemons added the flow at different moments;
#  - idle_age and hard_age: OpenFlow 1.3 carries neither (ovs-ofctl -O
#    OpenFlow13 prints neither, flowdp-ctl prints idle_age as ovs-ofctl
#    does over its default protocol);
#  - the leading space of ovs-ofctl's flow lines where flowdp-ctl has
#    none (dump-flows --no-stats);
#  - the header line ovs-ofctl prints before a flow dump
#    ("OFPST_FLOW reply (OF1.3) (xid=0x2):"), which flowdp-ctl does not.
# The last two need not differ: tests/ovs-diff.at lists them at its top
# as differences left for now, so that they are reported, not hidden.
ovs_norm () {
    sed -e 's/^ovs-ofctl: //' \
        -e 's/^flowdp-ctl: [a-z-]*: \(column [0-9]*: [^ ]*: \)\{0,1\}//' \
        -e 's/(xid=0x[0-9a-f]*)/(xid=X)/' \
        -e '/^OFPST_FLOW reply/d' -e '/^NXST_FLOW reply/d' \
        -e 's/^OFPST_AGGREGATE reply (OF1.3)/NXST_AGGREGATE reply/' \
        -e 's/duration=[0-9.]*s/duration=Xs/' \
        -e 's/idle_age=[0-9]*, //' -e 's/hard_age=[0-9]*, //' \
        -e 's/^ //'
}

# ports_norm [PORTS]: dump-ports output on stdin, as both sides can print
# it.  Open vSwitch's dummy ports keep no drop or error counters (it
# prints "?" for them), so those become "?" on both sides; xids as in
# ovs_norm.  With PORTS (Open vSwitch's full list), its LOCAL port (the
# bridge's own interface, which flowdpd does not have) is left out, and
# the header's count of PORTS becomes PORTS - 1.
ports_norm () {
    if test $# = 1; then
        local_port="s/: $1 ports\$/: `expr $1 - 1` ports/"
    else
        local_port=
    fi
    sed -e 's/\(drop\|errs\)=[0-9?]*/\1=?/g' -e '/^  port LOCAL:/,+1d' \
        -e 's/(xid=0x[0-9a-f]*)/(xid=X)/' -e "$local_port"
}

# Sorted lines, in the same order whatever the locale.
sorted () {
    LC_ALL=C sort "$@"
}
