#!/usr/bin/env python3
"""Random programs of the stack, output:FIELD, clone(), note, queues and
controller(...) for tests/acts-diff.at, which runs them through Open
vSwitch (ovs-vswitchd, dummy datapath) and flowdp (flowdp-ctl run
--ordered) and requires the same packets out of the same ports.

  acts-diff.py gen SEED DIR  writes DIR/flows.txt (the program),
                             DIR/packets.txt ("PORT HEX..." lines, a line
                             per run of packets on one port, in arrival
                             order), DIR/inN.pcap for
                             ports 1-4 (ports 3 and 4 receive nothing) and
                             DIR/about.txt
  acts-diff.py compare DIR   compares DIR/ovs-outN.pcap with
                             DIR/fdp-outN.pcap for N in 1-4; prints each
                             difference and exits 1 on any

The program: table 0 has a flow per input port (1, 2) and per kind of
packet (IPv4, or anything else), each a random list of actions that ends
in a resubmit to table 1 or 2 or not; tables 1 and 2 have a flow or two
each of the same kind.  The actions: loads of port numbers and other
values into registers, push and pop of registers and of header fields
(pop into eth_dst and, on IPv4 flows, ip_src rewrites the packet),
output to a port and to a register's bits, clone() holding header
rewrites, VLAN pushes, TTL changes, dec_ttl (the clone's copy
dies at TTL 1 and the original goes on), loads, pushes and pops, and
outputs (nested clones too), set_queue, pop_queue and enqueue, note,
controller(...) (no controller is connected on either side: the packet-in
goes nowhere, the packet goes on), and check_pkt_larger(N) with N about
the packets' lengths, mostly into reg3's low bit, which a flow in tables
1 and 2 matches (the rest of the flow's actions then run twice, once per
outcome, as Open vSwitch's check_pkt_len).  A register's value is often a port
(1-4), sometimes the input port or none (0, 9), so that output:FIELD
hits every case.  dec_ttl stands only directly inside clone(), where
both stop the clone's list alike (outside, flowdp stops the whole
pipeline, Open vSwitch the flow's actions: a known difference).

The packets: IPv4 UDP and TCP with random addresses, ports and TTL (1 to
3 often, so that dec_ttl in a clone kills the copy), and ARP; in on port
1 or 2.  None is VLAN-tagged and no flow has mod_vlan_vid: on a tagged
packet flowdp and Open vSwitch differ in two ways this test is not about
(ovs-ofctl -O OpenFlow13 sends mod_vlan_vid:N as push_vlan plus
set_field, which pushes a second tag; Open vSwitch's push_vlan pushes TCI
0 where flowdp's copies the outer tag's).

Only the standard library.
"""

import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen as g  # noqa: E402

PORTS = [1, 2, 3, 4]
MACS = ["02:00:00:00:00:%02x" % i for i in range(1, 6)]


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def chance(self, p):
        return self.rng.random() < p

    def reg(self):
        return self.rng.randrange(0, 4)

    def port_value(self):
        return self.rng.choice([1, 2, 3, 4, 1, 2, 3, 4, 0, 9])

    def subfield(self, reg, width=None):
        r = self.rng
        if width is None or self.chance(0.4):
            return "NXM_NX_REG%d[]" % reg
        lo = r.randrange(0, 33 - width)
        return "NXM_NX_REG%d[%d..%d]" % (reg, lo, lo + width - 1)

    def load(self):
        r = self.rng
        if self.chance(0.6):
            return "load:%d->NXM_NX_REG%d[0..15]" % (self.port_value(),
                                                      self.reg())
        return "load:%#x->NXM_NX_REG%d[]" % (r.randrange(1 << 32),
                                              self.reg())

    def push(self, ip):
        choices = ["push:%s" % self.subfield(self.reg(), 16),
                   "push:NXM_NX_REG%d[]" % self.reg(),
                   "push:NXM_OF_ETH_SRC[]", "push:NXM_OF_ETH_DST[0..15]"]
        if ip:
            choices += ["push:NXM_OF_IP_DST[]", "push:NXM_NX_IP_TTL[]"]
        return self.rng.choice(choices)

    def pop(self, ip):
        choices = ["pop:%s" % self.subfield(self.reg(), 16),
                   "pop:NXM_NX_REG%d[]" % self.reg(),
                   "pop:NXM_NX_REG%d[0..15]" % self.reg(),
                   "pop:NXM_OF_ETH_DST[]"]
        if ip:
            choices += ["pop:NXM_OF_IP_SRC[]", "pop:NXM_OF_IP_SRC[0..7]"]
        return self.rng.choice(choices)

    def output(self):
        r = self.rng
        if self.chance(0.5):
            return "output:%d" % r.choice(PORTS)
        return "output:NXM_NX_REG%d[0..15]" % self.reg()

    def note(self):
        n = self.rng.randrange(0, 12)
        return "note:" + ".".join("%02x" % self.rng.randrange(256)
                                  for _ in range(n))

    def controller(self):
        r = self.rng
        args = []
        if self.chance(0.5):
            args.append("reason=%s" % r.choice(["no_match", "action",
                                                 "invalid_ttl"]))
        if self.chance(0.5):
            args.append("id=%d" % r.randrange(1, 100))
        if self.chance(0.5):
            args.append("userdata=%02x.%02x" % (r.randrange(256),
                                                 r.randrange(256)))
        if self.chance(0.3):
            args.append("max_len=%d" % r.randrange(64, 200))
        return "controller(%s)" % ",".join(args) if args else "controller"

    def check_pkt_larger(self):
        """A length about the packets' (60 to 82 bytes) into reg3's low
        bit or another bit of a register."""
        r = self.rng
        dst = ("NXM_NX_REG3[0]" if self.chance(0.7)
               else "NXM_NX_REG%d[%d]" % (self.reg(), r.randrange(32)))
        return "check_pkt_larger(%d)->%s" % (r.choice([59, 60, 64, 70, 80,
                                                        100]), dst)

    def clone(self, ip, depth):
        r = self.rng
        acts = []
        for _ in range(r.randrange(1, 6)):
            k = r.randrange(12)
            if k == 0:
                acts.append("mod_dl_dst:%s" % r.choice(MACS))
            elif k == 1:
                acts.append("mod_dl_src:%s" % r.choice(MACS))
            elif k == 2:
                acts.append("push_vlan:0x8100")
            elif k == 3 and ip:
                acts.append("mod_nw_ttl:%d" % r.randrange(1, 255))
            elif k == 4 and ip:
                acts.append("dec_ttl")
            elif k == 5 and ip:
                acts.append("mod_nw_src:10.9.%d.%d" % (r.randrange(256),
                                                        r.randrange(256)))
            elif k == 6:
                acts.append(self.load())
            elif k == 7:
                acts.append(self.push(ip))
            elif k == 8:
                acts.append(self.pop(ip))
            elif k == 9 and depth < 2:
                acts.append(self.clone(ip, depth + 1))
            elif k == 10:
                acts.append(r.choice(["set_queue:%d" % r.randrange(8),
                                      "pop_queue"]))
            else:
                acts.append(self.output())
        if self.chance(0.8):
            acts.append(self.output())
        return "clone(%s)" % ",".join(acts)

    def actions(self, ip, resubmit_to):
        r = self.rng
        acts = []
        for _ in range(r.randrange(2, 9)):
            k = r.randrange(12)
            if k in (0, 1):
                acts.append(self.load())
            elif k == 2:
                acts.append(self.push(ip))
            elif k == 3:
                acts.append(self.pop(ip))
            elif k in (4, 5):
                acts.append(self.output())
            elif k == 6:
                acts.append(self.clone(ip, 0))
            elif k == 7:
                acts.append(r.choice(["set_queue:%d" % r.randrange(8),
                                      "pop_queue",
                                      "enqueue:%d:%d" % (r.choice(PORTS),
                                                         r.randrange(8))]))
            elif k == 8:
                acts.append(self.note())
            elif k == 9:
                acts.append(self.controller())
            elif k == 10:
                acts.append("mod_dl_src:%s" % r.choice(MACS))
            else:
                acts.append(self.check_pkt_larger())
        if resubmit_to is not None:
            pos = r.randrange(len(acts) + 1)
            acts.insert(pos, "resubmit(,%d)" % resubmit_to)
        return ",".join(acts)


def program(rng):
    gen = Gen(rng)
    flows = []
    for port in (1, 2):
        for ip in (True, False):
            to = rng.choice([None, 1, 2])
            match = "in_port=%d%s" % (port, ",ip" if ip else "")
            flows.append("table=0,priority=%d,%s,actions=%s"
                         % (20 if ip else 10, match, gen.actions(ip, to)))
    for table in (1, 2):
        to = 2 if table == 1 and rng.random() < 0.5 else None
        flows.append("table=%d,priority=30,reg3=0x1/0x1,actions=%s"
                     % (table, gen.actions(False, to)))
        flows.append("table=%d,priority=20,ip,actions=%s"
                     % (table, gen.actions(True, to)))
        flows.append("table=%d,priority=10,actions=%s"
                     % (table, gen.actions(False, to)))
    return "\n".join(flows) + "\n"


def packets(rng):
    out = []
    port = rng.choice([1, 2])
    for _ in range(rng.randrange(12, 30)):
        # Runs on one port: each run is one netdev-dummy/receive.
        if rng.random() < 0.25:
            port = 3 - port
        src, dst = rng.sample(MACS, 2)
        tags = []
        k = rng.randrange(5)
        if k < 4:
            ttl = rng.choice([1, 2, 3, 64, rng.randrange(1, 256)])
            proto = 17 if k < 2 else 6
            ip = g.ipv4_l4("10.0.%d.%d" % (rng.randrange(4),
                                           rng.randrange(1, 255)),
                           "10.1.%d.%d" % (rng.randrange(4),
                                           rng.randrange(1, 255)),
                           proto, rng.randrange(1, 65536),
                           rng.randrange(1, 65536),
                           bytes(rng.randrange(256)
                                 for _ in range(rng.randrange(0, 40))),
                           ttl=ttl)
            data = g.eth(dst, src, 0x0800, ip, tags)
        else:
            data = g.eth("ff:ff:ff:ff:ff:ff", src, 0x0806,
                         g.arp(1, src, "10.0.0.1", "00:00:00:00:00:00",
                               "10.0.0.2"), tags)
        if len(data) < 60:
            data += bytes(60 - len(data))
        out.append((port, data))
    return out


def gen(seed, outdir):
    rng = random.Random(seed)
    flows = program(rng)
    seq = packets(rng)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write(flows)
    with open(os.path.join(outdir, "about.txt"), "w") as f:
        f.write("seed %d: %d packets\n" % (seed, len(seq)))
    # One line per run of packets on the same port: one
    # netdev-dummy/receive takes them all, in order (a call costs far more
    # than a packet).
    with open(os.path.join(outdir, "packets.txt"), "w") as f:
        last = None
        for port, data in seq:
            if port != last:
                f.write("%s%d" % ("\n" if last else "", port))
                last = port
            f.write(" " + data.hex())
        f.write("\n")
    per_port = {p: [] for p in PORTS}
    for i, (port, data) in enumerate(seq):
        per_port[port].append((1000000 + 1000 * i, data))
    for port, pkts in per_port.items():
        g.write_pcap(os.path.join(outdir, "in%d.pcap" % port), pkts)


def compare(d):
    status = 0
    for port in PORTS:
        pk = []
        for who in ("ovs", "fdp"):
            path = os.path.join(d, "%s-out%d.pcap" % (who, port))
            pk.append([p for _, p in g.read_pcap(path)]
                      if os.path.exists(path) else [])
        ovs, fdp = pk
        if ovs != fdp:
            status = 1
            print("port %d: Open vSwitch sent %d packets, flowdp %d"
                  % (port, len(ovs), len(fdp)))
            for i in range(max(len(ovs), len(fdp))):
                a = ovs[i].hex() if i < len(ovs) else "-"
                b = fdp[i].hex() if i < len(fdp) else "-"
                if a != b:
                    print("  #%d ovs %s\n  #%d fdp %s" % (i, a, i, b))
    return status


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3])
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "compare":
        return compare(sys.argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
