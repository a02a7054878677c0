#!/bin/bash
# The main job: installs dependencies, builds flowdp and shows what it does
# (until the daemon lands: flow parsing, classification with masks and
# ranges, packets forwarded through the datapath from one capture to
# others with flow statistics, hashing and the hash benchmark).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" _build --enable-Werror >/dev/null
ctl="$top/_build/utilities/flowdp-ctl"
bench="$top/_build/utilities/flowdp-bench"

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
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

echo "== flowdp-ctl run: a capture through the datapath, every action kind =="
# tests/pcapgen.py writes in.pcap (15 packets of many kinds) and, built from
# scratch, the packets each port must send; the flows are the test suite's.
python3 "$top/tests/pcapgen.py" scenario "$demo"
grep -v '^#' "$top/tests/every-action.flows"
echo
(cd "$demo" && "$ctl" run "$top/tests/every-action.flows" \
     --port 1=pcap:rx=in.pcap,tx=back.pcap \
     --port 2=pcap:tx=out2.pcap --port 3=pcap:tx=out3.pcap)
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
