#!/usr/bin/env python3
"""Random learning-switch scenarios for tests/normal.at's differential test
against ovs-vswitchd (actions=NORMAL on both).

  normal-diff.py gen SEED DIR   writes, for a random scenario from SEED:
                                DIR/ports.txt    "N SETTING..." per port:
                                                 its VLAN settings, as
                                                 ovs-vsctl set port and
                                                 flowdp-ctl take them;
                                DIR/packets.txt  "PORT HEX" per packet, in
                                                 order (netdev-dummy/receive);
                                DIR/inN.pcap     the same packets per port,
                                                 stamped in order, for
                                                 flowdp-ctl run --ordered;
                                DIR/fdp-args.txt flowdp-ctl run's --port and
                                                 --port-vlan options
  normal-diff.py frame FILE DST SRC [TCI]
                                writes a one-packet capture FILE: a frame
                                from station SRC to DST (1..255: MAC
                                50:54:00:00:00:XX; "ff": broadcast),
                                tagged with TCI (hex) if given
  normal-diff.py compare DIR    compares DIR/ovs-outN.pcap with
                                DIR/fdp-outN.pcap for every port: the same
                                packets in the same order; prints the
                                scenario and the first difference if not

A scenario: four ports with VLAN modes drawn from access, trunk (every
VLAN or a list), native-tagged and native-untagged; five stations whose
frames come in on random ports (so addresses are learned, forwarded to and
moved), to stations, broadcast, multicast and now and then a reserved
multicast address; untagged, tagged with VLAN 10, 20 or 30, or priority
tagged.  Each frame is an IPv4 UDP datagram with its own number, so that
every packet out can be told apart.
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen as g  # noqa: E402

N_PORTS = 4
CONFIGS = [
    [],                                     # trunk, every VLAN
    ["tag=10"],                             # access (implied)
    ["vlan_mode=access", "tag=20"],
    ["trunks=10,20"],
    ["vlan_mode=trunk", "trunks=0,10"],
    ["vlan_mode=native-untagged", "tag=10"],
    ["vlan_mode=native-tagged", "tag=20", "trunks=10,20"],
    ["vlan_mode=native-untagged", "tag=30", "trunks=10"],
]
STATIONS = ["50:54:00:00:00:%02x" % i for i in range(1, 6)]
GROUPS = ["ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01"]
RESERVED = "01:80:c2:00:00:00"


def frame(rng, n):
    src = rng.choice(STATIONS)
    r = rng.random()
    if r < 0.55:
        dst = rng.choice([s for s in STATIONS if s != src])
    elif r < 0.95:
        dst = rng.choice(GROUPS)
    else:
        dst = RESERVED
    t = rng.random()
    if t < 0.5:
        tags = ()
    elif t < 0.9:
        tags = ((0x8100, rng.choice([10, 20, 30])
                 | (rng.choice([0, 3]) << 13)),)
    else:
        tags = ((0x8100, 5 << 13),)         # priority tagged, VLAN 0
    udp = g.ipv4_l4("10.0.0.1", "10.0.0.2", 17, 1000 + n, 2000,
                    struct.pack("!I", n) + b"normal-diff")
    return g.eth(dst, src, 0x0800, udp, tags), (src, dst, tags)


def gen(seed, outdir):
    rng = random.Random(seed)
    os.makedirs(outdir, exist_ok=True)
    ports = {p: rng.choice(CONFIGS) for p in range(1, N_PORTS + 1)}
    with open(os.path.join(outdir, "ports.txt"), "w") as f:
        for p in sorted(ports):
            f.write(" ".join([str(p)] + ports[p]) + "\n")
    packets = []
    for n in range(40):
        port = rng.randrange(1, N_PORTS + 1)
        data, about = frame(rng, n)
        packets.append((port, data, about))
    with open(os.path.join(outdir, "packets.txt"), "w") as f:
        for port, data, _ in packets:
            f.write("%d %s\n" % (port, data.hex()))
    with open(os.path.join(outdir, "about.txt"), "w") as f:
        f.write("seed %d\n" % seed)
        for p in sorted(ports):
            f.write("port %d: %s\n" % (p, " ".join(ports[p]) or "trunk"))
        for i, (port, _, (src, dst, tags)) in enumerate(packets):
            f.write("packet %d: in %d, %s -> %s%s\n"
                    % (i, port, src, dst,
                       "".join(" tci=0x%04x" % t[1] for t in tags)))
    per_port = {}
    for i, (port, data, _) in enumerate(packets):
        per_port.setdefault(port, []).append((1000000 + 1000 * i, data))
    args = []
    for p in sorted(ports):
        spec = []
        if p in per_port:
            path = os.path.join(outdir, "in%d.pcap" % p)
            g.write_pcap(path, per_port[p])
            spec.append("rx=" + path)
        spec.append("tx=" + os.path.join(outdir, "fdp-out%d.pcap" % p))
        args.append("--port %d=pcap:%s" % (p, ",".join(spec)))
        for s in ports[p]:
            args.append("--port-vlan=%d:%s" % (p, s))
    with open(os.path.join(outdir, "fdp-args.txt"), "w") as f:
        f.write(" ".join(args) + "\n")
    return 0


def read_out(d, who, port):
    path = os.path.join(d, "%s-out%d.pcap" % (who, port))
    if not os.path.exists(path):
        return []
    return [p for _, p in g.read_pcap(path)]


def compare(d):
    bad = 0
    for port in range(1, N_PORTS + 1):
        ovs = read_out(d, "ovs", port)
        fdp = read_out(d, "fdp", port)
        if ovs == fdp:
            continue
        bad += 1
        print("port %d: Open vSwitch sent %d packets, flowdp %d"
              % (port, len(ovs), len(fdp)))
        for i in range(max(len(ovs), len(fdp))):
            a = ovs[i].hex() if i < len(ovs) else "-"
            b = fdp[i].hex() if i < len(fdp) else "-"
            if a != b:
                print("  first difference at packet %d:\n    ovs %s\n"
                      "    fdp %s" % (i, a, b))
                break
    if bad:
        with open(os.path.join(d, "about.txt")) as f:
            sys.stdout.write(f.read())
    return 1 if bad else 0


def one_frame(path, dst, src, tci=None):
    def station(x):
        return "ff:ff:ff:ff:ff:ff" if x == "ff" else "50:54:00:00:00:%02x" % int(x)
    tags = ((0x8100, int(tci, 16)),) if tci else ()
    udp = g.ipv4_l4("10.0.0.1", "10.0.0.2", 17, 1000, 2000, b"normal")
    g.write_pcap(path, [(1000000, g.eth(station(dst), station(src), 0x0800,
                                        udp, tags))])
    return 0


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "frame":
        return one_frame(*sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        return gen(int(sys.argv[2]), sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "compare":
        return compare(sys.argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
