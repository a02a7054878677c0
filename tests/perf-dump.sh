#! /bin/sh
# perf-dump.sh: flowdp-ctl dump-flows against ovs-ofctl dump-flows, and
# flowdpd --db's memory, on the same flows (issue 22's goal: no slower than
# ovs-ofctl against ovs-vswitchd with the dummy datapath; flowdpd holding
# them in at most 100 MB RSS).
#
# usage: tests/perf-dump.sh [BUILDDIR] [N_FLOWS] [ROUNDS]
#   BUILDDIR  where flowdpd and flowdp-ctl are built (default _build)
#   N_FLOWS   five-tuple flows at random priorities (default 200000)
#   ROUNDS    dumps of each, alternating (default 3)
# Needs ovs-vswitchd, ovsdb-server, ovs-vsctl and ovs-ofctl
# (apt-get install -y openvswitch-switch).  Everything runs in a private
# temporary directory and every daemon is stopped on every exit path.
# The flows come from a fixed seed, so runs are comparable.
set -e

builddir=${1:-_build}
n_flows=${2:-200000}
rounds=${3:-3}
case $builddir in /*) ;; *) builddir=$(pwd)/$builddir ;; esac
ctl=$builddir/utilities/flowdp-ctl
flowdpd=$builddir/utilities/flowdpd
for p in "$ctl" "$flowdpd"; do
    test -x "$p" || { echo "$0: $p: not built" >&2; exit 1; }
done
for p in ovs-vswitchd ovsdb-server ovs-vsctl ovs-ofctl ovsdb-tool; do
    command -v $p >/dev/null || {
        echo "$0: $p not found (apt-get install -y openvswitch-switch)" >&2
        exit 1
    }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/perf-dump.XXXXXX")
stop() {
    for pidfile in "$dir"/flowdpd.pid "$dir"/ovs-vswitchd.pid \
                   "$dir"/ovsdb-server.pid; do
        test -e "$pidfile" && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    sleep 0.5
    rm -rf "$dir"
}
trap stop EXIT INT TERM

# The flows: exact five-tuples (TCP), random priorities; a fixed seed.
python3 - "$n_flows" > "$dir/flows.txt" <<'PY'
import random, sys
rng = random.Random(22)
n = int(sys.argv[1])
seen = set()
while len(seen) < n:
    t = (rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(16),
         rng.getrandbits(16))
    if t in seen:
        continue
    seen.add(t)
    ip = lambda a: "%d.%d.%d.%d" % (a >> 24, a >> 16 & 255, a >> 8 & 255,
                                    a & 255)
    print("priority=%d,tcp,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d,"
          "actions=output:%d" % (rng.randrange(1, 65536), ip(t[0]), ip(t[1]),
                                 t[2], t[3], rng.randrange(1, 5)))
PY

# flowdpd with a journal.
export FLOWDP_RUNDIR=$dir
"$flowdpd" --detach --pidfile="$dir/flowdpd.pid" --log-file="$dir/flowdpd.log" \
    --db="$dir/flows.db"
"$ctl" -t 600 add-flows "$dir/flows.txt"

# ovs-vswitchd with the dummy datapath, in the same directory.
export OVS_RUNDIR=$dir OVS_LOGDIR=$dir OVS_DBDIR=$dir OVS_SYSCONFDIR=$dir
ovsdb-tool create "$dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server --detach --no-chdir --pidfile="$dir/ovsdb-server.pid" \
    --log-file="$dir/ovsdb-server.log" --remote="punix:$dir/db.sock" \
    "$dir/conf.db"
ovs-vsctl --db="unix:$dir/db.sock" --no-wait init
ovs-vswitchd --detach --no-chdir --pidfile="$dir/ovs-vswitchd.pid" \
    --log-file="$dir/ovs-vswitchd.log" --enable-dummy=override \
    --disable-system "unix:$dir/db.sock"
ovs-vsctl --db="unix:$dir/db.sock" --timeout=30 add-br br0 \
    -- set bridge br0 datapath-type=dummy fail-mode=secure
ovs-ofctl del-flows br0
ovs-ofctl add-flows br0 "$dir/flows.txt"

now() { date +%s.%N; }
for r in $(seq 1 "$rounds"); do
    t0=$(now)
    ovs-ofctl dump-flows br0 > "$dir/ovs.out"
    t1=$(now)
    "$ctl" dump-flows > "$dir/flowdp.out"
    t2=$(now)
    # ovs-ofctl prints a header line per reply message: count the flows.
    echo "round $r: ovs-ofctl $(echo "$t1 - $t0" | bc) s ($(grep -c '^ cookie=' "$dir/ovs.out") flows)," \
         "flowdp-ctl $(echo "$t2 - $t1" | bc) s ($(grep -c '^ cookie=' "$dir/flowdp.out") flows)"
done
rss() { awk '/^VmRSS/ { print $2 / 1024 " MB" }' /proc/"$(cat "$1")"/status; }
echo "RSS: flowdpd --db $(rss "$dir/flowdpd.pid"), ovs-vswitchd $(rss "$dir/ovs-vswitchd.pid")"
