#!/usr/bin/env python3
"""Stateful programs and packet exchanges for tests/ct-diff.at, which runs
them through Open vSwitch (ovs-vswitchd, dummy datapath) and flowdp
(flowdp-ctl run --ordered) and requires the same packets out of the same
ports and the same connections.

  ct-diff.py gen SEED DIR   writes DIR/flows.txt (the program),
                            DIR/packets.txt (one "PORT HEX" line per
                            packet, in the order they arrive),
                            DIR/in1.pcap and DIR/in2.pcap (the same
                            packets, per port, timestamps giving the
                            order across ports) and DIR/about.txt (what
                            the seed chose, for a failure's report)
  ct-diff.py compare DIR    compares DIR/ovs-out1.pcap with
                            DIR/fdp-out1.pcap (and out2), then
                            DIR/ovs-ct.txt with DIR/fdp-ct.txt (as sets of
                            lines); prints each difference, exits 1 on any
                            (with DIR/ports.txt, every port it lists)
  ct-diff.py scenarios      lists the fixed scenarios: Open vSwitch's own
                            conntrack tests re-expressed
                            (tests/ct_scenarios.py says how and what is
                            left out)
  ct-diff.py scenario NAME DIR
                            writes scenario NAME as gen does (flows.txt,
                            packets.txt, inN.pcap for each port that
                            receives) and DIR/ports.txt (every port of
                            the scenario), DIR/fdp-ports.txt (flowdp-ctl
                            run's --port options), DIR/about.txt and
                            DIR/name.txt
  ct-diff.py expect DIR WHO checks WHO's (ovs or fdp) outputs and
                            connections in DIR against what Open
                            vSwitch's own test expects
  ct-diff.py odp-check DIR  writes DIR/odp.txt ("HEX ODP-STRING" for each
                            odp flow string the scenarios build packets
                            from) and DIR/flows.txt (port 1 to port 2)
  ct-diff.py odp-compare DIR
                            compares DIR/ovs-out2.pcap (netdev-dummy's
                            packets from those strings, received on port
                            1) with the builder's

The programs are what controllers write: a stateful firewall (ct(table=1)
on every IP packet, commit of new connections from port 1 with a mark
and a label set by exec(), established and related packets of committed
connections let through in both directions, new connections from port 2
and invalid packets dropped), in a zone given as a number or loaded into
a register first, optionally with source NAT to one address or
destination NAT of a virtual address to one server, and optionally a ct
without table that commits in table 0.  Translations are to single
addresses with the ports kept: a range lets each tracker pick its own
address and port (Open vSwitch's pick hashes with a random basis), and the
replies of a fixed exchange could then not follow; ranges are tested
against a model (tests/unit/test-conntrack.c) and with real traffic
(tests/netns.at).

The exchanges, interleaved at random: TCP connections (handshake, data
both ways, then FIN/ACK on both sides or a RST; sometimes a retransmitted
SYN, a segment far outside the window, an unsolicited SYN from port 2),
UDP request/response, ICMP echo, an ICMP port unreachable for a UDP
request (related), the same over IPv6 (ICMPv6 echo).  The server side's
packets are addressed as the server sees the connection after NAT.

Only the standard library.
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen as g  # noqa: E402
import ct_scenarios as sc  # noqa: E402

CLIENT_MAC = "02:00:00:00:01:%02x"
SERVER_MAC = "02:00:00:00:02:%02x"
CLIENTS4 = ["10.0.1.%d" % i for i in range(1, 5)]
SERVERS4 = ["10.0.2.%d" % i for i in range(1, 4)]
CLIENTS6 = ["fd00:1::%x" % i for i in range(1, 5)]
SERVERS6 = ["fd00:2::%x" % i for i in range(1, 4)]
SNAT4, SNAT6 = "10.0.9.9", "fd00:9::9"
VIP4, VIP6 = "10.0.8.8", "fd00:8::8"
VIP_PORT, SERVER_PORT = 80, 8080


# ---------------------------------------------------------------------------
# Packets.

def tcp_seg(flags, seq, ack, payload=b"", win=29200):
    return (struct.pack("!IIBBHHH", seq, ack, 0x50, flags, win, 0, 0)
            + payload)


def l4(proto, sport, dport, body, src, dst, v6):
    """body: the bytes after the ports for TCP, the payload for UDP, the
    (type, code, rest) for ICMP."""
    pseudo_addr = (g.ip6(src) + g.ip6(dst)) if v6 else (g.ip4(src)
                                                          + g.ip4(dst))
    if proto == 6:
        seg = struct.pack("!HH", sport, dport) + body
        c = g.csum(pseudo_addr + struct.pack("!BBH", 0, 6, len(seg)) + seg)
        return seg[:16] + struct.pack("!H", c) + seg[18:]
    if proto == 17:
        seg = struct.pack("!HHHH", sport, dport, 8 + len(body), 0) + body
        c = g.csum(pseudo_addr + struct.pack("!BBH", 0, 17, len(seg))
                   + seg) or 0xFFFF
        return seg[:6] + struct.pack("!H", c) + seg[8:]
    typ, code, rest = body
    seg = struct.pack("!BBH", typ, code, 0) + rest
    if v6:
        c = g.csum(pseudo_addr + struct.pack("!IxxxB", len(seg), 58) + seg)
    else:
        c = g.csum(seg)
    return seg[:2] + struct.pack("!H", c) + seg[4:]


def ip_packet(src, dst, proto, seg, v6, ident=0):
    if v6:
        return struct.pack("!IHBB16s16s", 6 << 28, len(seg),
                           58 if proto == 1 else proto, 64, g.ip6(src),
                           g.ip6(dst)) + seg
    return g.ipv4(src, dst, proto, seg, ident=ident)


def frame(src_mac, dst_mac, ip, v6):
    return g.eth(dst_mac, src_mac, 0x86DD if v6 else 0x0800, ip)


# ---------------------------------------------------------------------------
# The program.

def program(rng, order_rng):
    """Returns (flows text, about dict).  'order_rng' draws only where
    the commit puts nat relative to exec() (both orders are what
    ovs-ofctl takes; a separate generator keeps each seed's other draws
    what they were before it was added)."""
    about = {
        "zone": rng.choice([0, 1, 7, rng.randrange(1, 65536)]),
        "zone_reg": rng.random() < 0.3,
        "mark": rng.choice([0, 1, rng.randrange(1, 1 << 32)]),
        "label": rng.choice([0, rng.randrange(1, 1 << 128)]),
        "nat": rng.choice(["none", "none", "snat", "dnat"]),
        "commit0": rng.random() < 0.2,
        "nat_first": order_rng.random() < 0.5,
    }
    zone = about["zone"]
    nat = about["nat"]
    # Zone from a register: table 0 loads it, ct reads it.
    if about["zone_reg"]:
        zarg = "zone=NXM_NX_REG6[0..15]"
        load = "load:%d->NXM_NX_REG6[0..15]," % zone
    else:
        zarg = "zone=%d" % zone
        load = ""
    nat_arg = ",nat" if nat != "none" else ""
    flows = []
    for proto in ("ip", "ipv6"):
        for port in (1, 2):
            flows.append("table=0,priority=10,%s,in_port=%d,actions=%s"
                         "ct(table=1,%s%s)" % (proto, port, load, zarg,
                                                nat_arg))
    flows.append("table=0,priority=0,actions=drop")
    execs = []
    if about["mark"]:
        execs.append("set_field:%#x->ct_mark" % about["mark"])
    if about["label"]:
        execs.append("set_field:%#x->ct_label" % about["label"])
    exec_arg = ",exec(%s)" % ",".join(execs) if execs else ""
    for proto, v6 in (("ip", False), ("ipv6", True)):
        if nat == "snat":
            spec = ",nat(src=%s)" % (("[%s]" % SNAT6) if v6 else SNAT4)
        elif nat == "dnat":
            spec = ",nat(dst=%s:%d)" % ((("[%s]" % SERVERS6[0]) if v6
                                         else SERVERS4[0]), SERVER_PORT)
        else:
            spec = ""
        parts = (spec, exec_arg) if about["nat_first"] else (exec_arg, spec)
        flows.append("table=1,priority=20,ct_state=+new+trk,%s,in_port=1,"
                     "actions=ct(commit,%s%s%s),output:2"
                     % ((proto, zarg) + parts))
    mark = about["mark"]
    mark_match = ",ct_mark=%#x" % mark if mark else ""
    flows += [
        "table=1,priority=30,ct_state=+inv+trk,actions=drop",
        "table=1,priority=20,ct_state=+est+trk%s,in_port=1,actions=output:2"
        % mark_match,
        "table=1,priority=20,ct_state=+est+trk%s,in_port=2,actions=output:1"
        % mark_match,
        "table=1,priority=20,ct_state=+rel+trk,in_port=2,actions=output:1",
        "table=1,priority=20,ct_state=+rel+trk,in_port=1,actions=output:2",
        "table=1,priority=10,ct_state=+new+trk,in_port=2,actions=drop",
        "table=1,priority=0,actions=drop",
    ]
    if about["commit0"]:
        # A ct without table commits UDP to port 53 in zone 99 and sends
        # it on at once: the rest of table 0 sees the packet untracked.
        flows.append("table=0,priority=50,udp,in_port=1,tp_dst=53,"
                     "actions=ct(commit,zone=99),output:2")
        flows.append("table=0,priority=50,udp,in_port=2,tp_src=53,"
                     "actions=ct(zone=99),output:1")
    return "\n".join(flows) + "\n", about


# ---------------------------------------------------------------------------
# Exchanges.  Each is a generator of (port, bytes) in its own order; the
# sequence interleaves them at random.

class Conn:
    def __init__(self, rng, about, proto, v6, ci, si, sport):
        self.v6 = v6
        self.proto = proto
        clients = CLIENTS6 if v6 else CLIENTS4
        servers = SERVERS6 if v6 else SERVERS4
        self.c = clients[ci]
        self.cmac = CLIENT_MAC % (ci + 1)
        self.sport = sport
        nat = about["nat"]
        if nat == "dnat":
            # The client talks to the virtual address; the server (the
            # first one) sees its own address and port.
            self.dst_c = VIP6 if v6 else VIP4
            self.dport_c = VIP_PORT
            self.s = servers[0]
            self.smac = SERVER_MAC % 1
            self.dport_s = SERVER_PORT
            self.src_s = self.c
        else:
            self.s = servers[si]
            self.smac = SERVER_MAC % (si + 1)
            self.dst_c = self.s
            self.dport_c = VIP_PORT if proto != 1 else 0
            if proto == 17 and not v6 and about["commit0"] \
               and rng.random() < 0.5:
                self.dport_c = 53       # Table 0's ct without table.
            self.dport_s = self.dport_c
            self.src_s = (SNAT6 if v6 else SNAT4) if nat == "snat" else self.c

    def out(self, body, sport=None, dport=None):
        """Client to server, as sent by the client (port 1)."""
        seg = l4(self.proto, self.sport if sport is None else sport,
                 self.dport_c if dport is None else dport, body, self.c,
                 self.dst_c, self.v6)
        return (1, frame(self.cmac, self.smac,
                         ip_packet(self.c, self.dst_c, self.proto, seg,
                                   self.v6), self.v6))

    def back(self, body):
        """Server to client, as sent by the server (port 2): to the
        address and port the server saw."""
        seg = l4(self.proto, self.dport_s, self.sport, body, self.s,
                 self.src_s, self.v6)
        return (2, frame(self.smac, self.cmac,
                         ip_packet(self.s, self.src_s, self.proto, seg,
                                   self.v6), self.v6))


def tcp_exchange(rng, conn):
    A = 0x10000000 + rng.randrange(1 << 20)
    B = 0x50000000 + rng.randrange(1 << 20)
    SYN, ACK, FIN, RST, PSH = 0x02, 0x10, 0x01, 0x04, 0x08
    yield conn.out(tcp_seg(SYN, A, 0))
    if rng.random() < 0.2:
        yield conn.out(tcp_seg(SYN, A, 0))          # Retransmitted.
    yield conn.back(tcp_seg(SYN | ACK, B, A + 1))
    yield conn.out(tcp_seg(ACK, A + 1, B + 1))
    a, b = A + 1, B + 1
    for _ in range(rng.randrange(1, 4)):
        n = rng.randrange(1, 200)
        yield conn.out(tcp_seg(PSH | ACK, a, b, bytes(rng.randrange(256)
                                                      for _ in range(n))))
        a += n
        m = rng.randrange(0, 300)
        yield conn.back(tcp_seg(PSH | ACK if m else ACK, b, a,
                                bytes(rng.randrange(256) for _ in range(m))))
        b += m
    if rng.random() < 0.15:
        # Far outside the window: invalid, dropped by both.
        yield conn.out(tcp_seg(PSH | ACK, a + 0x40000000, b, b"x" * 10))
    if rng.random() < 0.2:
        yield conn.out(tcp_seg(RST | ACK, a, b))
        return
    yield conn.out(tcp_seg(FIN | ACK, a, b))
    yield conn.back(tcp_seg(ACK, b, a + 1))
    yield conn.back(tcp_seg(FIN | ACK, b, a + 1))
    yield conn.out(tcp_seg(ACK, a + 1, b + 1))


def udp_exchange(rng, conn):
    for _ in range(rng.randrange(1, 4)):
        yield conn.out(bytes(rng.randrange(256)
                             for _ in range(rng.randrange(1, 100))))
        if rng.random() < 0.8:
            yield conn.back(bytes(rng.randrange(256)
                                  for _ in range(rng.randrange(1, 100))))


def udp_unreachable(rng, conn):
    """A UDP request answered by an ICMP port unreachable that quotes it
    as the server received it (related to the connection)."""
    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
    port, pkt = conn.out(payload)
    yield port, pkt
    seg = l4(17, conn.sport, conn.dport_s, payload, conn.src_s, conn.s,
             conn.v6)
    quoted = ip_packet(conn.src_s, conn.s, 17, seg, conn.v6)
    if conn.v6:
        icmp = (1, 4, b"\0\0\0\0" + quoted)     # ICMPv6 port unreachable.
    else:
        icmp = (3, 3, b"\0\0\0\0" + quoted)
    seg = l4(1, 0, 0, icmp, conn.s, conn.src_s, conn.v6)
    yield (2, frame(conn.smac, conn.cmac,
                    ip_packet(conn.s, conn.src_s, 1, seg, conn.v6),
                    conn.v6))


def icmp_echo(rng, conn):
    ident = rng.randrange(1, 65536)
    req, rep = (128, 129) if conn.v6 else (8, 0)
    for seq in range(1, rng.randrange(2, 4)):
        rest = struct.pack("!HH", ident, seq) + b"ping" * 4
        seg = l4(1, 0, 0, (req, 0, rest), conn.c, conn.dst_c, conn.v6)
        yield (1, frame(conn.cmac, conn.smac,
                        ip_packet(conn.c, conn.dst_c, 1, seg, conn.v6),
                        conn.v6))
        seg = l4(1, 0, 0, (rep, 0, rest), conn.s, conn.src_s, conn.v6)
        yield (2, frame(conn.smac, conn.cmac,
                        ip_packet(conn.s, conn.src_s, 1, seg, conn.v6),
                        conn.v6))


def unsolicited(rng, conn):
    """A SYN from the server side that no connection expects."""
    seg = l4(6, 443, 40000 + rng.randrange(1000),
             tcp_seg(0x02, rng.randrange(1 << 32), 0), conn.s, conn.c,
             conn.v6)
    yield (2, frame(conn.smac, conn.cmac,
                    ip_packet(conn.s, conn.c, 6, seg, conn.v6), conn.v6))


def exchanges(rng, about):
    gens = []
    used = set()
    for _ in range(rng.randrange(3, 9)):
        v6 = rng.random() < 0.3
        kind = rng.choice(["tcp", "tcp", "udp", "unreach", "echo",
                           "unsolicited"])
        proto = {"tcp": 6, "udp": 17, "unreach": 17, "echo": 1,
                 "unsolicited": 6}[kind]
        ci, si = rng.randrange(4), rng.randrange(3)
        # Distinct source ports, so that source NAT to one address keeps
        # every port (a clash would make each tracker pick its own).
        while True:
            sport = rng.randrange(1024, 65536)
            if sport not in used:
                used.add(sport)
                break
        if kind == "echo" and about["nat"] == "dnat":
            kind, proto = "udp", 17
        conn = Conn(rng, about, proto, v6, ci, si, sport)
        gen = {"tcp": tcp_exchange, "udp": udp_exchange,
               "unreach": udp_unreachable, "echo": icmp_echo,
               "unsolicited": unsolicited}[kind](rng, conn)
        gens.append(gen)
    seq = []
    while gens:
        gen = rng.choice(gens)
        try:
            seq.append(next(gen))
        except StopIteration:
            gens.remove(gen)
    return seq


def gen(seed, outdir):
    rng = random.Random(seed)
    flows, about = program(rng, random.Random("nat-order-%d" % seed))
    seq = exchanges(rng, about)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write(flows)
    with open(os.path.join(outdir, "about.txt"), "w") as f:
        f.write("seed %d: %s, %d packets\n"
                % (seed, ", ".join("%s=%s" % kv for kv in
                                   sorted(about.items())), len(seq)))
    with open(os.path.join(outdir, "packets.txt"), "w") as f:
        for port, data in seq:
            f.write("%d %s\n" % (port, data.hex()))
    per_port = {1: [], 2: []}
    for i, (port, data) in enumerate(seq):
        per_port[port].append((1000000 + 1000 * i, data))
    for port, pkts in per_port.items():
        g.write_pcap(os.path.join(outdir, "in%d.pcap" % port), pkts)


# ---------------------------------------------------------------------------
# Comparison.

def describe(data):
    return data.hex()


def scenario_ports(d):
    """The ports of DIR: those of DIR/ports.txt, or 1 and 2 (gen's)."""
    path = os.path.join(d, "ports.txt")
    if os.path.exists(path):
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    return [1, 2]


def compare(d):
    status = 0
    for port in scenario_ports(d):
        files = [os.path.join(d, "%s-out%d.pcap" % (who, port))
                 for who in ("ovs", "fdp")]
        pk = []
        for path in files:
            pk.append([p for _, p in g.read_pcap(path)]
                      if os.path.exists(path) else [])
        ovs, fdp = pk
        if ovs != fdp:
            status = 1
            print("port %d: Open vSwitch sent %d packets, flowdp %d"
                  % (port, len(ovs), len(fdp)))
            for i in range(max(len(ovs), len(fdp))):
                a = ovs[i] if i < len(ovs) else None
                b = fdp[i] if i < len(fdp) else None
                if a != b:
                    print("  first difference at packet %d:" % (i + 1))
                    print("    ovs: %s" % (describe(a) if a else "(none)"))
                    print("    fdp: %s" % (describe(b) if b else "(none)"))
                    break
    sets = []
    for who in ("ovs", "fdp"):
        with open(os.path.join(d, "%s-ct.txt" % who)) as f:
            sets.append(sorted(line.strip() for line in f if line.strip()))
    if sets[0] != sets[1]:
        status = 1
        print("connections differ (- Open vSwitch, + flowdp):")
        for line in sorted(set(sets[0]) - set(sets[1])):
            print("  - " + line)
        for line in sorted(set(sets[1]) - set(sets[0])):
            print("  + " + line)
    return status


# ---------------------------------------------------------------------------
# Fixed scenarios (tests/ct_scenarios.py).

def write_scenario(name, outdir):
    scen = sc.by_name(name)
    if scen is None:
        sys.stderr.write("ct-diff.py: no scenario %s (see ct-diff.py "
                         "scenarios)\n" % name)
        return 2
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write(scen.flows)
    with open(os.path.join(outdir, "name.txt"), "w") as f:
        f.write(name + "\n")
    with open(os.path.join(outdir, "about.txt"), "w") as f:
        f.write("scenario %s, from Open vSwitch's \"%s\", %d packets\n"
                % (name, scen.source, len(scen.packets)))
    with open(os.path.join(outdir, "packets.txt"), "w") as f:
        for port, data in scen.packets:
            f.write("%d %s\n" % (port, data.hex()))
    with open(os.path.join(outdir, "ports.txt"), "w") as f:
        f.write(" ".join(str(p) for p in scen.ports) + "\n")
    per_port = {}
    for i, (port, data) in enumerate(scen.packets):
        per_port.setdefault(port, []).append((1000000 + 1000 * i, data))
    # A port that only transmits gets no rx capture: flowdp's pcap port
    # takes tx=FILE alone (datapath/port.c: "rx=FILE, tx=FILE or both")
    # and counts such a port as exhausted from the start.
    args = []
    for port in scen.ports:
        spec = []
        if port in per_port:
            path = os.path.join(outdir, "in%d.pcap" % port)
            g.write_pcap(path, per_port[port])
            spec.append("rx=" + path)
        spec.append("tx=" + os.path.join(outdir, "fdp-out%d.pcap" % port))
        args.append("--port %d=pcap:%s" % (port, ",".join(spec)))
    with open(os.path.join(outdir, "fdp-ports.txt"), "w") as f:
        f.write(" ".join(args) + "\n")
    return 0


def read_out(d, who, port):
    path = os.path.join(d, "%s-out%d.pcap" % (who, port))
    if not os.path.exists(path):
        return []
    return [p for _, p in g.read_pcap(path)]


def check_expect(d, who):
    """WHO's outputs and connections in DIR against the scenario's
    expectation (what Open vSwitch's own test states)."""
    with open(os.path.join(d, "name.txt")) as f:
        scen = sc.by_name(f.read().strip())
    status = 0
    label = {"ovs": "Open vSwitch", "fdp": "flowdp"}[who]
    for port, want in sorted(scen.expect_out.items()):
        got = read_out(d, who, port)
        ok = len(got) == len(want)
        for i, w in enumerate(want):
            if not ok:
                break
            if isinstance(w, int):
                ok = got[i] == scen.packets[w][1]
            elif isinstance(w, bytes):
                ok = got[i] == w
        if not ok:
            status = 1
            print("%s: %s, port %d: expected %d packets, got %d"
                  % (scen.name, label, port, len(want), len(got)))
            for i in range(max(len(want), len(got))):
                w = want[i] if i < len(want) else None
                if isinstance(w, int):
                    w = scen.packets[w][1]
                print("  expected %s" % (w.hex() if isinstance(w, bytes)
                                         else w))
                print("  got      %s" % (got[i].hex() if i < len(got)
                                         else "(none)"))
    if scen.csums:
        for port in scen.ports:
            for i, pkt in enumerate(read_out(d, who, port)):
                bad = sc.bad_checksums(pkt)
                if bad:
                    status = 1
                    print("%s: %s, port %d, packet %d: wrong %s checksum"
                          % (scen.name, label, port, i + 1,
                             ", ".join(bad)))
    if scen.expect_ct is not None:
        with open(os.path.join(d, "%s-ct.txt" % who)) as f:
            got = set(line.strip() for line in f if line.strip())
        if scen.cleared:
            got = set(sc.ct_cleared(line) for line in got)
        want = set(scen.expect_ct)
        if got != want:
            status = 1
            print("%s: %s's connections are not the test's (- expected, "
                  "+ got):" % (scen.name, label))
            for line in sorted(want - got):
                print("  - " + line)
            for line in sorted(got - want):
                print("  + " + line)
    return status


def odp_check(outdir):
    os.makedirs(outdir, exist_ok=True)
    seen = []
    for scen in sc.SCENARIOS:
        for text in scen.odp:
            if text not in seen:
                seen.append(text)
    with open(os.path.join(outdir, "odp.txt"), "w") as f:
        for text in seen:
            f.write("%s %s\n" % (sc.odp_packet(text).hex(), text))
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write("in_port=1,actions=output:2\n")
    return 0


def odp_compare(d):
    with open(os.path.join(d, "odp.txt")) as f:
        want = [line.split(" ", 1) for line in f.read().splitlines()]
    got = read_out(d, "ovs", 2)
    status = 0
    if len(got) != len(want):
        print("netdev-dummy sent %d packets for %d odp strings"
              % (len(got), len(want)))
        status = 1
    for (hexa, text), pkt in zip(want, got):
        if pkt.hex() != hexa:
            status = 1
            print("%s:\n  netdev-dummy %s\n  builder      %s"
                  % (text, pkt.hex(), hexa))
    return status


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "compare":
        return compare(sys.argv[2])
    if len(sys.argv) == 2 and sys.argv[1] == "scenarios":
        for scen in sc.SCENARIOS:
            print(scen.name)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "scenario":
        return write_scenario(sys.argv[2], sys.argv[3])
    if (len(sys.argv) == 4 and sys.argv[1] == "expect"
            and sys.argv[3] in ("ovs", "fdp")):
        return check_expect(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "odp-check":
        return odp_check(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "odp-compare":
        return odp_compare(sys.argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
