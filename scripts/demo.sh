#!/bin/bash
# The main job: installs dependencies, builds flowdp, and runs it: flowdpd
# with capture ports and a durable table, flows inserted with flowdp-ctl
# (some with ranges), captures replayed through them, dump-flows with
# counters, dump-tables, a restart that restores the flows; a multi-table
# pipeline (an ACL with a conjunction, then forwarding by register) with
# dump-flows, dump-tables and traces; ovs-ofctl programming flowdpd over
# OpenFlow (a bundle, dumps, a refused bundle, deletes); a select group
# sharing connections
# between two ports and a meter policing UDP; then real
# traffic between two network namespaces forwarded by flowdpd through
# AF_XDP ports (AF_PACKET where XDP is refused): ping, ping -6 and a TCP
# transfer, then a stateful firewall (ct) that lets the inside connect out
# and nothing in, with dump-conntrack, and a VXLAN overlay between flowdpd's
# tunnel port and the kernel's vxlan device (ping across it); then the
# offline tools (parse-flows, classify), the CPU level and hashing.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" _build --enable-Werror >/dev/null
ctl="$top/_build/utilities/flowdp-ctl"
bench="$top/_build/bench/flowdp-bench"

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
echo "== flowdpd: the daemon, with a durable flow table =="
# Everything in a temporary directory: socket, pidfile, log, journal and
# captures.  tests/pcapgen.py writes in.pcap (15 packets of many kinds) and
# the packets each port must send, built from scratch; many.pcap has 3000
# 64-byte UDP packets to 1000 destinations.
export FLOWDP_RUNDIR="$demo"
python3 "$top/tests/pcapgen.py" scenario "$demo"
python3 "$top/tests/pcapgen.py" many "$demo/many.pcap" 3000
daemon="$top/_build/utilities/flowdpd"
"$daemon" --detach --pidfile --log-file="$demo/flowdpd.log" --db="$demo/flows.db" \
    --port=2=pcap:tx="$demo/out2.pcap" --port=3=pcap:tx="$demo/out3.pcap" \
    --port=5=pcap:tx="$demo/ranges.pcap"
live_ns=
# Stops what the demo started (daemons by their pidfiles, processes in
# its namespaces) and removes its namespaces and files, on every exit.
cleanup() {
    for pidfile in "$demo/flowdpd.pid" "$demo/mt/flowdpd.pid" "$demo/of/flowdpd.pid" "$demo/live/flowdpd.pid"; do
        [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
    done
    if [ -n "$live_ns" ]; then
        for ns in a b dp; do
            for pid in $(ip netns pids "$live_ns-$ns" 2>/dev/null); do
                kill "$pid" 2>/dev/null
            done
            ip netns del "$live_ns-$ns" 2>/dev/null
        done
    fi
    rm -rf "$demo"
}
trap 'cleanup' EXIT
trap 'exit 1' HUP INT TERM
echo "flowdpd started: $(grep -o 'listening on .*' "$demo/flowdpd.log")"
echo
echo "== flowdp-ctl add-flows: flows using every action kind =="
grep -v '^#' "$top/tests/every-action.flows"
"$ctl" add-flows "$top/tests/every-action.flows"
echo
echo "== flowdp-ctl add-flow: range flows (pipapo sub-tables) =="
# (For packets from port 4, above the default priority of the others.)
for f in "cookie=0x21,priority=40010,in_port=4,udp,nw_dst=10.0.0.0-10.0.1.199,tp_src=1000-1002,actions=output:5" \
         "cookie=0x22,priority=40009,in_port=4,udp,nw_dst=10.0.2.7-10.0.3.11,actions=mod_tp_dst:9999,output:5" \
         "cookie=0x23,priority=40005,in_port=4,actions=drop"; do
    echo "$f"
    "$ctl" add-flow "$f"
done
echo
echo "== flowdp-ctl add-port: the captures start flowing =="
"$ctl" add-port 1 "pcap:rx=$demo/in.pcap,tx=$demo/back.pcap"
"$ctl" add-port 4 "pcap:rx=$demo/many.pcap"
for _ in $(seq 1 100); do
    "$ctl" show | grep -q 'rx pkts=3000,' && break
    sleep 0.1
done
"$ctl" show
echo
echo "== flowdp-ctl dump-flows (as ovs-ofctl dump-flows prints them) =="
"$ctl" dump-flows --rsort
echo
echo "== flowdp-ctl dump-tables =="
"$ctl" dump-tables
echo
echo "== flowdp-ctl trace =="
"$ctl" trace "in_port=4,udp,nw_src=10.1.0.1,nw_dst=10.0.2.9,tp_src=1000,tp_dst=5000"
echo
echo "== A bad flow is refused with its column; the table is unchanged =="
"$ctl" add-flow "priority=5,tcp,tp_dst=99999,actions=drop" || true
echo
echo "== Stopping flowdpd (captures complete) and starting it again: the flows are back =="
"$ctl" del-port 1 && "$ctl" del-port 2 && "$ctl" del-port 3 && "$ctl" del-port 5
kill "$(cat "$demo/flowdpd.pid")"
while [ -e "$demo/flowdpd.pid" ]; do sleep 0.1; done
"$daemon" --detach --pidfile --log-file="$demo/flowdpd.log" --db="$demo/flows.db"
grep 'flows restored' "$demo/flowdpd.log" | tail -1 | sed 's/.*|//'
"$ctl" dump-flows --no-stats --rsort | head -3
echo "..."
kill "$(cat "$demo/flowdpd.pid")"
while [ -e "$demo/flowdpd.pid" ]; do sleep 0.1; done
echo
echo "== The captures written equal the expected packets byte for byte =="
for p in 2 3; do
    python3 "$top/tests/pcapgen.py" compare "$demo/out$p.pcap" "$demo/expect-$p.pcap"
done
python3 "$top/tests/pcapgen.py" compare "$demo/back.pcap" "$demo/expect-1.pcap"
if command -v tcpdump >/dev/null; then
    echo
    echo "== tcpdump reads port 2's capture (checksums verified) =="
    tcpdump -nn -vv -e -r "$demo/out2.pcap" 2>/dev/null
fi
echo

# A multi-table pipeline, in a second flowdpd: table 0 is an ACL whose
# allowed set is a conjunction (2 source addresses x 2 TCP ports: 4 flows
# instead of the 4 of their cross product, and 100 x 100 would be 200
# instead of 10,000); its conj_id flow marks the packet in reg0 and
# resubmits to table 1, which forwards by reg0 and dl_dst.
multi_table_demo() {
    local mt="$demo/mt"
    mkdir -p "$mt"
    python3 - "$top/tests" "$mt/acl.pcap" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pcapgen import eth, ipv4_l4, write_pcap, A, B, PAY
C = "00:00:00:00:00:03"
pkts = [(B, "10.0.0.1", 80), (C, "10.0.0.2", 443), (B, "10.0.0.3", 80),
        (B, "10.0.0.1", 22)]
write_pcap(sys.argv[2], [(1700000000000000 + i * 1000,
                          eth(dst, A, 0x0800,
                              ipv4_l4(src, "10.0.1.1", 6, 40000, port, PAY)))
                         for i, (dst, src, port) in enumerate(pkts)])
PY
    cat > "$mt/pipeline.flows" <<'FLOWS'
cookie=0x1,priority=100,ip,nw_src=10.0.0.1,actions=conjunction(1,1/2)
cookie=0x2,priority=100,ip,nw_src=10.0.0.2,actions=conjunction(1,1/2)
cookie=0x3,priority=100,tcp,tp_dst=80,actions=conjunction(1,2/2)
cookie=0x4,priority=100,tcp,tp_dst=443,actions=conjunction(1,2/2)
cookie=0x5,priority=100,conj_id=1,ip,actions=load:1->NXM_NX_REG0[],resubmit(,1)
cookie=0x6,priority=0,actions=drop
cookie=0x10,table=1,priority=200,reg0=1,dl_dst=00:00:00:00:00:02,actions=output:2
cookie=0x11,table=1,priority=100,reg0=1,actions=output:3
FLOWS
    local mctl="env FLOWDP_RUNDIR=$mt $ctl"
    FLOWDP_RUNDIR="$mt" "$daemon" --detach --pidfile --log-file="$mt/flowdpd.log" \
        --db="$mt/flows.db" --port=2=pcap:tx="$mt/out2.pcap" \
        --port=3=pcap:tx="$mt/out3.pcap"
    echo "flowdp-ctl add-flows (one transaction across tables 0 and 1):"
    sed 's/^/  /' "$mt/pipeline.flows"
    $mctl add-flows "$mt/pipeline.flows"
    echo "-- 4 TCP packets: 10.0.0.1:80 and 10.0.0.2:443 allowed, 10.0.0.3:80 and 10.0.0.1:22 denied --"
    $mctl add-port 1 "pcap:rx=$mt/acl.pcap"
    for _ in $(seq 1 100); do
        $mctl show | grep -q 'packets=4,' && break
        sleep 0.1
    done
    $mctl show
    echo "-- flowdp-ctl dump-flows (table by table) --"
    $mctl dump-flows
    echo "-- flowdp-ctl dump-tables | grep table (each table in use) --"
    $mctl dump-tables | grep '^  table'
    echo "-- flowdp-ctl trace: an allowed packet --"
    $mctl trace "in_port=1,tcp,dl_dst=00:00:00:00:00:03,nw_src=10.0.0.2,nw_dst=10.0.1.1,tp_dst=443"
    echo "-- flowdp-ctl trace: a denied packet --"
    $mctl trace "in_port=1,tcp,dl_dst=00:00:00:00:00:02,nw_src=10.0.0.3,nw_dst=10.0.1.1,tp_dst=80"
    echo "-- flowdp-ctl classify, offline: the flows each packet hits --"
    $ctl classify --pcap "$mt/acl.pcap" --in-port=1 "$mt/pipeline.flows"
    kill "$(cat "$mt/flowdpd.pid")"
    while [ -e "$mt/flowdpd.pid" ]; do sleep 0.1; done
    echo
}
echo "== A multi-table pipeline: an ACL with a conjunction, then forwarding =="
multi_table_demo

# OpenFlow: ovs-ofctl programs flowdpd as it programs ovs-vswitchd, over
# the daemon's .mgmt socket.  A bundle of flows goes in as one
# transaction (a bundle with one bad flow changes nothing), ovs-ofctl and
# flowdp-ctl dump the same flows, and deletes go either way.
openflow_demo() {
    local of="$demo/of"
    mkdir -p "$of"
    if ! command -v ovs-ofctl >/dev/null; then
        echo "(skipped: ovs-ofctl is not installed)"
        return
    fi
    FLOWDP_RUNDIR="$of" "$daemon" --detach --pidfile --log-file="$of/flowdpd.log" \
        --db="$of/flows.db" --port=1=ring --port=2=ring
    local sw="unix:$of/flowdpd.mgmt" octl="env FLOWDP_RUNDIR=$of $ctl"
    cat > "$of/acl.flows" <<'FLOWS'
table=0,priority=100,ip,nw_src=10.0.0.0/8,actions=ct(table=1,zone=5)
table=0,priority=10,arp,actions=NORMAL
table=0,priority=0,actions=drop
table=1,priority=100,ct_state=+trk+new,tcp,tp_dst=80,actions=ct(commit,zone=5),output:2
table=1,priority=100,ct_state=+trk+est,actions=output:2
FLOWS
    echo "ovs-ofctl -O OpenFlow14 --bundle add-flows $sw acl.flows"
    ovs-ofctl -O OpenFlow14 --bundle add-flows "$sw" "$of/acl.flows"
    echo "-- ovs-ofctl -O OpenFlow13 dump-flows --"
    ovs-ofctl -O OpenFlow13 dump-flows "$sw"
    echo "-- flowdp-ctl dump-flows: the same flows --"
    $octl dump-flows
    echo "-- a bundle with a flow naming a group that does not exist: refused, nothing added --"
    printf 'priority=5,udp,actions=output:2\npriority=6,udp,actions=group:9\n' > "$of/bad.flows"
    ovs-ofctl -O OpenFlow14 --bundle add-flows "$sw" "$of/bad.flows" 2>&1 | head -2 || true
    ovs-ofctl -O OpenFlow13 dump-aggregate "$sw"
    echo "-- ovs-ofctl packet-out: an ARP request from port 1 through the tables (output:TABLE); the arp flow's NORMAL floods it to port 2 and counts it --"
    local arp=ffffffffffff00000000000108060001080006040001000000000001c0a80001000000000000c0a80002
    ovs-ofctl -O OpenFlow13 packet-out "$sw" "in_port=1 packet=$arp actions=output:TABLE"
    for _ in $(seq 1 50); do
        ovs-ofctl -O OpenFlow13 dump-flows "$sw" arp | grep -q 'n_packets=1' && break
        sleep 0.1
    done
    ovs-ofctl -O OpenFlow13 dump-flows "$sw" arp
    echo "-- ovs-ofctl del-flows \"table=1\", then flowdp-ctl dump-flows --"
    ovs-ofctl -O OpenFlow13 del-flows "$sw" "table=1"
    $octl dump-flows --no-stats
    kill "$(cat "$of/flowdpd.pid")"
    while [ -e "$of/flowdpd.pid" ]; do sleep 0.1; done
    echo
}
echo "== OpenFlow: ovs-ofctl programs flowdpd =="
openflow_demo

# A select group and a meter, in a third flowdpd: TCP goes to group 1,
# whose two equal buckets share the connections between ports 2 and 3 by a
# hash of the 5-tuple; UDP passes meter 1 (10 packets a second, a burst
# of 20) on its way to port 4.  200 TCP connections and 100 UDP packets
# arrive at once.
group_meter_demo() {
    local gm="$demo/gm"
    mkdir -p "$gm"
    python3 - "$top/tests" "$gm/in.pcap" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pcapgen import eth, ipv4_l4, write_pcap, A, B, PAY
pkts = [ipv4_l4("10.0.0.1", "10.0.1.1", 6, 20000 + i, 80, PAY)
        for i in range(200)]
pkts += [ipv4_l4("10.0.0.1", "10.0.1.1", 17, 30000 + i, 53, PAY)
         for i in range(100)]
write_pcap(sys.argv[2], [(1700000000000000 + i, eth(B, A, 0x0800, p))
                         for i, p in enumerate(pkts)])
PY
    local gctl="env FLOWDP_RUNDIR=$gm $ctl"
    FLOWDP_RUNDIR="$gm" "$daemon" --detach --pidfile --log-file="$gm/flowdpd.log" \
        --port=2=pcap:tx="$gm/out2.pcap" --port=3=pcap:tx="$gm/out3.pcap" \
        --port=4=pcap:tx="$gm/out4.pcap"
    local group='group_id=1,type=select,selection_method=hash,fields(ip_src,ip_dst,tcp_src,tcp_dst),bucket=output:2,bucket=output:3'
    local meter='meter=1,pktps,burst,stats,bands=type=drop,rate=10,burst_size=20'
    echo "flowdp-ctl add-group $group"
    $gctl add-group "$group"
    echo "flowdp-ctl add-meter $meter"
    $gctl add-meter "$meter"
    $gctl add-flow 'priority=10,tcp,actions=group:1'
    $gctl add-flow 'priority=10,udp,actions=meter:1,output:4'
    $gctl add-port 1 "pcap:rx=$gm/in.pcap"
    for _ in $(seq 1 100); do
        $gctl show | grep -q 'rx pkts=300,' && break
        sleep 0.1
    done
    echo "-- flowdp-ctl dump-flows --"
    $gctl dump-flows
    echo "-- flowdp-ctl dump-groups / dump-group-stats (each bucket's share of 200 connections) --"
    $gctl dump-groups
    $gctl dump-group-stats
    echo "-- flowdp-ctl dump-meters / meter-stats (the burst passes, the rest is dropped by the band) --"
    $gctl dump-meters
    $gctl meter-stats
    echo "-- flowdp-ctl show --"
    $gctl show
    kill "$(cat "$gm/flowdpd.pid")"
    while [ -e "$gm/flowdpd.pid" ]; do sleep 0.1; done
    echo
}
echo "== A select group and a meter =="
group_meter_demo

# Live traffic.  Three namespaces: "a" (va, 10.77.0.1, fd77::1) and "b"
# (vb, 10.77.0.2, fd77::2), each on a veth whose other end (dpa, dpb) is
# in "dp", where flowdpd runs with no addresses of its own; nothing touches
# the host's interfaces.
live_skip() {
    echo "skipped: $*"
    echo
}
live_demo() {
    if [ "$(id -u)" != 0 ]; then
        live_skip "network namespaces need root"
        return 0
    fi
    live_ns=fdpX-demo$$
    if ! ip netns add "$live_ns-a" 2>"$demo/netns.err"; then
        live_ns=
        live_skip "the kernel refuses network namespaces: $(cat "$demo/netns.err")"
        return 0
    fi
    ip netns add "$live_ns-b" && ip netns add "$live_ns-dp" || {
        live_skip "the kernel refuses network namespaces"; return 0; }
    if ! ip link add va netns "$live_ns-a" type veth peer name dpa netns "$live_ns-dp" \
            2>"$demo/netns.err" \
       || ! ip link add vb netns "$live_ns-b" type veth peer name dpb netns "$live_ns-dp" \
            2>"$demo/netns.err"; then
        live_skip "the kernel refuses veth pairs: $(cat "$demo/netns.err")"
        return 0
    fi
    local a="ip netns exec $live_ns-a" b="ip netns exec $live_ns-b" dp="ip netns exec $live_ns-dp"
    for ns in a b dp; do ip -n "$live_ns-$ns" link set lo up; done
    $dp sysctl -qw net.ipv6.conf.all.disable_ipv6=1
    for dev in dpa dpb; do
        $dp sysctl -qw net.ipv6.conf.$dev.disable_ipv6=1
        ip -n "$live_ns-dp" link set $dev up
    done
    # Every interface keeps the kernel's default offloads: the senders
    # leave TCP/UDP checksums partial (and, to an afpacket port, send TCP
    # as 64 kB TSO packets); the ports complete and cut them, and
    # "flowdp-ctl show" counts it under each port.
    ip -n "$live_ns-a" link set va up
    ip -n "$live_ns-b" link set vb up
    ip -n "$live_ns-a" addr add 10.77.0.1/24 dev va
    ip -n "$live_ns-b" addr add 10.77.0.2/24 dev vb
    ip -n "$live_ns-a" addr add fd77::1/64 dev va nodad
    ip -n "$live_ns-b" addr add fd77::2/64 dev vb nodad

    mkdir -p "$demo/live"
    local kind
    for kind in afxdp afpacket; do
        if FLOWDP_RUNDIR="$demo/live" $dp "$daemon" --detach --pidfile \
               --log-file="$demo/live/flowdpd.log" \
               --port=1=$kind:dev=dpa --port=2=$kind:dev=dpb 2>"$demo/live/err"; then
            break
        fi
        echo "flowdpd with $kind ports: $(cat "$demo/live/err")"
        if [ $kind = afpacket ]; then
            live_skip "no live port type works here"
            return 0
        fi
        echo "falling back to afpacket"
    done
    local lctl="env FLOWDP_RUNDIR=$demo/live $ctl"
    echo "flowdpd runs in namespace $live_ns-dp with $kind ports 1 (dpa) and 2 (dpb)"
    # What each port got (for afxdp: the XDP program, its mode, copy or
    # zero copy), as flowdpd logs it.
    sed -n 's/.*|info|\(port [0-9]* added: .*\)/  \1/p' "$demo/live/flowdpd.log"
    cat > "$demo/live/flows.txt" <<'FLOWS'
cookie=0x11,priority=100,arp,in_port=1,actions=output:2
cookie=0x12,priority=100,arp,in_port=2,actions=output:1
cookie=0x21,priority=100,ip,in_port=1,actions=output:2
cookie=0x22,priority=100,ip,in_port=2,actions=output:1
cookie=0x31,priority=100,ipv6,in_port=1,actions=output:2
cookie=0x32,priority=100,ipv6,in_port=2,actions=output:1
FLOWS
    echo "flowdp-ctl add-flows:"
    sed 's/^/  /' "$demo/live/flows.txt"
    $lctl add-flows "$demo/live/flows.txt"
    echo
    echo "-- ping 10.77.0.2 and fd77::2 from namespace a --"
    $a ping -c 3 -i 0.2 -W 2 10.77.0.2 | tail -2
    $a ping -6 -c 3 -i 0.2 -W 2 fd77::2 | tail -2
    echo "-- a 512 KiB TCP transfer from a to b, SHA-256 checked --"
    head -c 524288 /dev/urandom > "$demo/live/sent.bin"
    $b python3 "$top/tests/netns-traffic.py" tcp-server 10.77.0.2 5001 "$demo/live/got.bin" &
    local server=$!
    $a python3 "$top/tests/netns-traffic.py" tcp-client 10.77.0.2 5001 "$demo/live/sent.bin"
    wait $server
    local sent got
    sent=$(sha256sum < "$demo/live/sent.bin")
    got=$(sha256sum < "$demo/live/got.bin")
    echo "sent     ${sent%% *}"
    echo "received ${got%% *}"
    [ "$sent" = "$got" ] || { echo "demo.sh: the file arrived damaged" >&2; exit 1; }
    echo
    echo "-- flowdp-ctl show --"
    $lctl show
    echo "-- flowdp-ctl dump-flows --rsort --"
    $lctl dump-flows --rsort
    echo
    echo "-- A stateful firewall: a (inside) may connect out, nothing gets in but replies --"
    cat > "$demo/live/fw.txt" <<'FLOWS'
table=0,priority=100,arp,in_port=1,actions=output:2
table=0,priority=100,arp,in_port=2,actions=output:1
table=0,priority=100,icmp6,icmp_type=135,actions=resubmit(,9)
table=0,priority=100,icmp6,icmp_type=136,actions=resubmit(,9)
table=0,priority=10,ip,actions=ct(table=1,zone=9)
table=0,priority=10,ipv6,actions=ct(table=1,zone=9)
table=1,priority=30,ct_state=+inv+trk,actions=drop
table=1,priority=20,ct_state=+new+trk,ip,in_port=1,actions=ct(commit,zone=9,exec(set_field:0x5->ct_mark)),output:2
table=1,priority=20,ct_state=+new+trk,ipv6,in_port=1,actions=ct(commit,zone=9,exec(set_field:0x5->ct_mark)),output:2
table=1,priority=20,ct_state=+est+trk,ct_mark=0x5,in_port=1,actions=output:2
table=1,priority=20,ct_state=+est+trk,ct_mark=0x5,in_port=2,actions=output:1
table=1,priority=20,ct_state=+rel+trk,in_port=2,actions=output:1
table=1,priority=10,ct_state=+new+trk,in_port=2,actions=drop
table=9,in_port=1,actions=output:2
table=9,in_port=2,actions=output:1
FLOWS
    echo "flowdp-ctl replace-flows:"
    sed 's/^/  /' "$demo/live/fw.txt"
    $lctl replace-flows "$demo/live/fw.txt"
    echo "-- from a: ping 10.77.0.2, ping fd77::2 and a TCP transfer (SHA-256 checked) pass --"
    $a ping -c 2 -i 0.2 -W 2 10.77.0.2 | tail -2
    $a ping -6 -c 2 -i 0.2 -W 2 fd77::2 | tail -2
    $b python3 "$top/tests/netns-traffic.py" tcp-server 10.77.0.2 5002 "$demo/live/got2.bin" &
    server=$!
    $a python3 "$top/tests/netns-traffic.py" tcp-client 10.77.0.2 5002 "$demo/live/sent.bin"
    wait $server
    got=$(sha256sum < "$demo/live/got2.bin")
    echo "received ${got%% *}"
    [ "$sent" = "$got" ] || { echo "demo.sh: the file arrived damaged" >&2; exit 1; }
    echo "-- from b: ping 10.77.0.1 and a TCP connection to a are dropped --"
    $b ping -c 2 -i 0.2 -W 1 10.77.0.1 | tail -2 || true
    $a python3 "$top/tests/netns-traffic.py" tcp-server 10.77.0.1 5003 "$demo/live/never.bin" 2>/dev/null &
    server=$!
    $b python3 "$top/tests/netns-traffic.py" tcp-blocked 10.77.0.1 5003 2
    kill $server 2>/dev/null; wait $server 2>/dev/null || true
    echo "-- flowdp-ctl dump-conntrack (as ovs-appctl dpctl/dump-conntrack) --"
    $lctl dump-conntrack
    echo "-- flowdp-ctl ct-stats-show --"
    $lctl ct-stats-show
    echo "-- flowdp-ctl dump-flows table=1 --"
    $lctl dump-flows table=1
    kill "$(cat "$demo/live/flowdpd.pid")"
    while [ -e "$demo/live/flowdpd.pid" ]; do sleep 0.1; done
    echo
    echo "-- A VXLAN overlay: flowdpd's tunnel port and the kernel's vxlan device in b --"
    # flowdpd is 10.77.0.9 on port 2 (dpb), answers ARP for it and learns
    # b's MAC; b's kernel has a vxlan device (VNI 42) to it, 10.99.0.2
    # inside; a is 10.99.0.1 behind flowdpd's port 1.  The flows choose
    # the tunnel's remote and key (remote_ip=flow, key=flow).
    $a ip addr add 10.99.0.1/24 dev va
    $a ip link set va mtu 1400
    $b ip link add vx0 type vxlan id 42 local 10.77.0.2 remote 10.77.0.9 \
        dstport 4789 dev vb
    $b ip link set vx0 mtu 1400 up
    $b ip addr add 10.99.0.2/24 dev vx0
    FLOWDP_RUNDIR="$demo/live" $dp "$daemon" --detach --pidfile \
        --log-file="$demo/live/flowdpd.log" --port=1=$kind:dev=dpa \
        --port=2=$kind:dev=dpb --port=10=vxlan:remote_ip=flow,key=flow \
        --addr=2:10.77.0.9/24
    cat > "$demo/live/vxlan.txt" <<'FLOWS'
priority=10,in_port=1,actions=set_field:10.77.0.2->tun_dst,set_field:42->tun_id,output:10
priority=10,in_port=10,tun_src=10.77.0.2,tun_id=42,actions=output:1
FLOWS
    echo "flowdp-ctl add-flows:"
    sed 's/^/  /' "$demo/live/vxlan.txt"
    $lctl add-flows "$demo/live/vxlan.txt"
    echo "-- from a: ping 10.99.0.2, the kernel's end of the overlay --"
    $a ping -c 3 -i 0.2 -W 2 10.99.0.2 | tail -2
    echo "-- flowdp-ctl neigh/show, route/show --"
    $lctl neigh/show
    $lctl route/show
    echo "-- flowdp-ctl show (the tunnel port's counters) --"
    $lctl show
    echo "-- flowdp-ctl dump-flows --"
    $lctl dump-flows
    kill "$(cat "$demo/live/flowdpd.pid")"
    while [ -e "$demo/live/flowdpd.pid" ]; do sleep 0.1; done
    for ns in a b dp; do ip netns del "$live_ns-$ns"; done
    live_ns=
    echo
}
echo "== Live traffic: flowdpd forwards between two network namespaces (AF_XDP) =="
live_demo

echo "== Offline: flowdp-ctl parse-flows and classify =="
cat > "$demo/flows.txt" <<'FLOWS'
# ovs-ofctl syntax, plus ranges (pipapo sub-tables)
cookie=0x1,priority=100,tcp,nw_dst=10.0.0.0/8,tp_dst=80,actions=output:2
cookie=0x2,priority=200,tcp,nw_src=10.1.2.3/8,tp_dst=1000-2000,actions=mod_nw_tos:8,3
cookie=0x3,priority=10,ip,actions=controller
cookie=0x4,priority=300,ipv6,ipv6_src=2001:db8::1-2001:db8::ff,actions=drop
FLOWS
cat > "$demo/packets.txt" <<'PACKETS'
in_port=1,tcp,nw_src=192.168.1.1,nw_dst=10.2.3.4,tp_src=40000,tp_dst=80
in_port=1,tcp,nw_src=10.9.9.9,nw_dst=10.2.3.4,tp_src=40000,tp_dst=1500
in_port=1,udp,nw_src=10.9.9.9,nw_dst=172.16.0.1,tp_src=53,tp_dst=53
in_port=1,ipv6,ipv6_src=2001:db8::42
in_port=1,arp
PACKETS

echo "== Flows, as written =="
grep -v '^#' "$demo/flows.txt"
echo
echo "== flowdp-ctl parse-flows: the canonical form ovs-ofctl prints =="
"$ctl" parse-flows "$demo/flows.txt"
echo
echo "== flowdp-ctl classify: the cookie of the flow each packet hits =="
paste -d ' ' "$demo/packets.txt" <("$ctl" classify "$demo/flows.txt" "$demo/packets.txt") \
    | sed 's/ \([^ ]*\)$/  ->  \1/'
echo
echo "== A bad flow gets the column and the reason =="
echo 'priority=5,tcp,tp_dst=99999,actions=drop' | "$ctl" parse-flows - || true
echo

echo "== CPU level (FLOWDP_CPU=generic|sse42|avx2 overrides) =="
"$ctl" cpu
echo
echo "== Hashing a 5-tuple key (nw_src 192.168.0.1, nw_dst 10.0.0.1, tcp 80 -> 80) =="
"$ctl" hash --basis=0x12345678 0x0a000001c0a80001 0x0000000600500050
echo
echo "== The same key with the portable code: same CRC32C, fast hash jhash2 =="
FLOWDP_CPU=generic "$ctl" hash --basis=0x12345678 0x0a000001c0a80001 0x0000000600500050
echo
echo "== Hash speed (flowdp-bench hash --quick) =="
"$bench" --quick hash
