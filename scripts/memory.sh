#!/bin/bash
# Memory of a flowdpd holding N exact five-tuple flows (default 200,000),
# the figures docs/PERFORMANCE.md quotes: the daemon's RSS before and after
# "flowdp-ctl add-flows" of them, the table's own accounting
# (dump-tables' memory=, which includes the flows' actions), and the time
# of add-flows and of dump-flows.
#
# usage: scripts/memory.sh [BUILD-DIR [N]]   (default _build, 200000)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build}" && pwd)
n=${2:-200000}
run=$(mktemp -d)
trap 'kill "$(cat "$run/flowdpd.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$run"' EXIT
export FLOWDP_RUNDIR=$run

# Flow i: tcp from 10.0.0.0 + i to 192.168.x.y, distinct ports.
python3 - "$n" > "$run/flows" <<'PY'
import sys
def ip(a):
    return "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)
for i in range(int(sys.argv[1])):
    print("priority=100,tcp,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d,"
          "actions=output:1" % (ip(0x0a000000 + i),
                                ip(0xc0a80000 + (i * 7919) % 65536),
                                1024 + i % 60000, 80 + i % 3))
PY

rss() { awk '/VmRSS/ { print $2 }' "/proc/$(cat "$run/flowdpd.pid")/status"; }
ctl=$build/utilities/flowdp-ctl
"$build/utilities/flowdpd" --detach --pidfile 2>"$run/log"
empty=$(rss)
t0=$(date +%s.%N)
"$ctl" add-flows "$run/flows"
t1=$(date +%s.%N)
sleep 2
full=$(rss)
table=$("$ctl" dump-tables | sed -n 's/.*memory=\([0-9]*\) bytes.*/\1/p')
t2=$(date +%s.%N)
"$ctl" dump-flows > "$run/dump"
t3=$(date +%s.%N)
echo "flows=$n rss_empty_kB=$empty rss_kB=$full" \
     "table_bytes_per_flow=$((table / n))" \
     "add_flows_s=$(echo "$t1 - $t0" | bc) dump_flows_s=$(echo "$t3 - $t2" | bc)" \
     "dumped=$(wc -l < "$run/dump")"
