#!/bin/sh
# netns-capture.sh OUT.pcap
#
# Captures real kernel traffic for tests/parse-pcap.at: makes two network
# namespaces joined by a veth pair, sends ping, IPv6 ping, a TCP transfer
# (python3 -m http.server), UDP over IPv4 and IPv6 between addresses that
# exist only inside them (ARP and neighbour discovery come along), and
# writes what one end saw to OUT.pcap with tcpdump.
#
# The namespaces and interfaces are named fdpP<pid>... so that parallel
# tests of other areas do not collide with them, and are removed on every
# way out (a trap on EXIT, and on signals).  Exits 77 (autotest's "skip")
# with a message if this is not root, a tool is missing, or the kernel
# refuses namespaces or veth pairs.

out=$1
if test -z "$out"; then
    echo "usage: $0 OUT.pcap" >&2
    exit 2
fi
skip() {
    echo "netns-capture: $*; skipping" >&2
    exit 77
}
test "$(id -u)" = 0 || skip "needs root to create network namespaces"
for tool in ip tcpdump ping python3; do
    command -v $tool >/dev/null 2>&1 || skip "$tool is not installed"
done

a=fdpPa$$
b=fdpPb$$
va=fdpPva$$
vb=fdpPvb$$
pids=
cleanup() {
    trap '' HUP INT TERM
    for pid in $pids; do
        kill "$pid" 2>/dev/null
    done
    ip netns del "$a" 2>/dev/null
    ip netns del "$b" 2>/dev/null
    for pid in $pids; do
        wait "$pid" 2>/dev/null
    done
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

ip netns add "$a" 2>/dev/null || skip "the kernel refuses network namespaces"
ip netns add "$b" || exit 1
ip link add "$va" netns "$a" type veth peer name "$vb" netns "$b" \
    2>/dev/null || skip "the kernel refuses veth pairs"
ina() { ip netns exec "$a" "$@"; }
inb() { ip netns exec "$b" "$@"; }
ip -n "$a" link set lo up && ip -n "$b" link set lo up &&
ip -n "$a" addr add 10.231.0.1/24 dev "$va" &&
ip -n "$b" addr add 10.231.0.2/24 dev "$vb" &&
ip -n "$a" addr add fd00:231::1/64 dev "$va" nodad &&
ip -n "$b" addr add fd00:231::2/64 dev "$vb" nodad &&
ip -n "$a" link set "$va" up && ip -n "$b" link set "$vb" up || exit 1

# tcpdump says "listening on" once it captures.  Started without the
# shell function, so that $! is tcpdump itself (ip netns exec execs it).
ip netns exec "$a" tcpdump -i "$va" -n -U --immediate-mode -s 0 -w "$out" \
    2>tcpdump.err &
tcpdump_pid=$!
pids="$pids $tcpdump_pid"
i=0
until grep -q 'listening on' tcpdump.err 2>/dev/null; do
    i=$((i + 1))
    test $i -lt 100 || { cat tcpdump.err >&2; exit 1; }
    sleep 0.1
done

ina ping -c 3 -i 0.2 -W 2 10.231.0.2 >/dev/null || exit 1
ina ping -6 -c 3 -i 0.2 -W 2 fd00:231::2 >/dev/null || exit 1

# TCP: fetch a file over HTTP, IPv4 and IPv6.
mkdir -p www && head -c 20000 /dev/urandom > www/blob
(cd www && exec ip netns exec "$b" python3 -m http.server --bind :: 8231) \
    >http.log 2>&1 &
pids="$pids $!"
fetch() {
    ina python3 -c '
import sys, time, urllib.request
for i in range(50):
    try:
        data = urllib.request.urlopen(sys.argv[1], timeout=5).read()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("cannot fetch " + sys.argv[1])
sys.exit(0 if len(data) == 20000 else "short read")' "$1"
}
fetch http://10.231.0.2:8231/blob || exit 1
fetch 'http://[fd00:231::2]:8231/blob' || exit 1

# UDP: datagrams both ways, IPv4 and IPv6.
ip netns exec "$b" python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 9231))
s.settimeout(5)
for _ in range(4):
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)' &
udp_pid=$!
pids="$pids $udp_pid"
sleep 0.3
ina python3 -c '
import socket
for family, addr in ((socket.AF_INET, "10.231.0.2"),
                     (socket.AF_INET6, "fd00:231::2")):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(5)
    for n in (1, 300):
        s.sendto(b"x" * n, (addr, 9231))
        s.recvfrom(2048)' || exit 1
wait $udp_pid

sleep 0.3
kill -TERM $tcpdump_pid
wait $tcpdump_pid
exit 0
