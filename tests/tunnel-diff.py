#!/usr/bin/env python3
"""Random tunnel programs for tests/tunnel-diff.at's differential test
against ovs-vswitchd.

  tunnel-diff.py gen SEED DIR [MAC]
                                writes, for a random scenario from SEED
                                (MAC: the switches' underlay MAC, default
                                aa:55:aa:55:00:01):
                                DIR/kind.txt      vxlan, geneve or gre
                                DIR/flows.txt     the program (ovs-ofctl
                                                  -O OpenFlow13 syntax)
                                DIR/tlv.txt       the TLV map (geneve;
                                                  empty otherwise)
                                DIR/encap.pcap    inner frames into the
                                                  overlay port (1)
                                DIR/decap.pcap    outer frames into the
                                                  underlay port
                                DIR/encap.txt, DIR/decap.txt
                                                  the same, one hex frame
                                                  per line (for
                                                  netdev-dummy/receive)
  tunnel-diff.py compare A B    compares two captures: the same frames
                                (in any order: see compare()), except
                                an outer UDP source port (each switch
                                picks it from its own flow hash) and the
                                UDP checksum that covers it; prints the
                                first difference if not

The two switches:
  overlay port 1, tunnel port 10 (remote_ip=flow, key=flow), and the
  underlay: the switch is 10.0.0.1/24 with MAC aa:55:aa:55:00:01 (or
  the one given), its
  neighbours 10.0.0.2 (02:00:00:00:00:02) and 10.0.0.3
  (02:00:00:00:00:03) are static entries.
A program: flows from port 1 into the tunnel, matching the inner UDP
destination port, each setting tun_dst (one of the two neighbours), tun_id
and now and then (geneve) tun_flags (oam) (tun_tos and tun_ttl are
read-only in Open vSwitch: the port's settings decide them; flowdp cannot
set tun_metadataN yet);
flows out of the tunnel to port 1, matching tun_id, tun_src and now and
then tun_flags or tun_metadata0 (no OpenFlow encoding carries a match on
tun_tos or tun_ttl: ovs-vswitchd refuses them), each writing its own number in
the frame's source MAC so that the flow that took it can be told; a
catch-all for decapsulated frames (number 0x99).  Outer frames: for the switch's address and
tunnel port, from either neighbour or a stranger, with random VNIs/keys,
TOS and TTL, Geneve options mapped or not, critical or not; and some that
are no tunnel packets for the switch (another address, another UDP port,
truncated), which neither switch may deliver to port 1.
"""

import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen as g  # noqa: E402

LOCAL_IP = "10.0.0.1"
DEFAULT_MAC = "aa:55:aa:55:00:01"
NEIGHBOURS = {"10.0.0.2": "02:00:00:00:00:02",
              "10.0.0.3": "02:00:00:00:00:03"}
STRANGER = "10.0.0.9"
GENEVE_CLASS = 0x0102
TLV_MAP = ["{class=0x102,type=0x80,len=4}->tun_metadata0",
           "{class=0x102,type=0x81,len=8}->tun_metadata1"]
UDP_PORT = {"vxlan": 4789, "geneve": 6081}


def inner_frame(rng, dport, n):
    """An inner frame to UDP port 'dport', numbered 'n' in its payload."""
    payload = struct.pack("!I", n) + bytes(rng.randrange(0, 40))
    if rng.random() < 0.2:
        l3 = g.ipv6_l4("2001:db8::%x" % rng.randrange(1, 99), "2001:db8::1",
                       17, 4000 + n, dport, payload)
        return g.eth("50:54:00:00:00:02", "50:54:00:00:00:01", 0x86DD, l3)
    l3 = g.ipv4_l4("10.1.0.%d" % rng.randrange(1, 250), "10.2.0.1", 17,
                   4000 + n, dport, payload, tos=rng.choice([0, 0x20, 0xb8]),
                   ttl=rng.choice([64, 3]))
    return g.eth("50:54:00:00:00:02", "50:54:00:00:00:01", 0x0800, l3)


def geneve_options(rng):
    """Random options: mapped ones (class 0x102, types 0x80 and 0x81),
    sometimes an unmapped one, rarely an unmapped critical one."""
    opts = b""
    if rng.random() < 0.7:
        opts += struct.pack("!HBB", GENEVE_CLASS, 0x80, 1)
        opts += struct.pack("!I", rng.choice([1, 2, rng.getrandbits(32)]))
    if rng.random() < 0.4:
        opts += struct.pack("!HBB", GENEVE_CLASS, 0x81, 2)
        opts += struct.pack("!Q", rng.getrandbits(64))
    if rng.random() < 0.2:
        opts += struct.pack("!HBB", 0x0103, 0x10, 1) + b"\x00\x00\x00\x07"
    if rng.random() < 0.05:
        opts += struct.pack("!HBB", 0x0103, 0x90, 1) + b"\x00\x00\x00\x07"
    return opts


def outer_frame(rng, local_mac, kind, src, dst, vni, inner, tos=0, ttl=64,
                opts=b"", dport=None):
    if kind == "gre":
        hdr = struct.pack("!HHI", 0x2000, 0x6558, vni)
        l3 = g.ipv4(src, dst, 47, hdr + inner, tos=tos, ttl=ttl, ident=0,
                    frag=0x4000)
    else:
        if kind == "vxlan":
            tnl = struct.pack("!II", 0x08000000, vni << 8)
        else:
            tnl = struct.pack("!BBHI", len(opts) // 4, 0, 0x6558, vni << 8)
            tnl += opts
        port = UDP_PORT[kind] if dport is None else dport
        l4 = struct.pack("!HHHH", rng.randrange(32768, 61000), port,
                         8 + len(tnl) + len(inner), 0) + tnl + inner
        l3 = g.ipv4(src, dst, 17, l4, tos=tos, ttl=ttl, ident=0,
                    frag=0x4000)
    return g.eth(local_mac, NEIGHBOURS.get(src, "02:00:00:00:00:09"), 0x0800,
                 l3)


def gen(seed, outdir, local_mac=DEFAULT_MAC):
    rng = random.Random(seed)
    kind = rng.choice(["vxlan", "geneve", "gre"])
    id_bits = 32 if kind == "gre" else 24
    os.makedirs(outdir, exist_ok=True)
    flows = []
    # Into the tunnel: one flow per inner UDP port 0..3.
    for dport in range(4):
        acts = ["set_field:%s->tun_dst" % rng.choice(sorted(NEIGHBOURS)),
                "set_field:%d->tun_id" % rng.getrandbits(id_bits)]
        if kind == "geneve" and rng.random() < 0.2:
            acts.append("set_field:1->tun_flags")
        acts.append("output:10")
        flows.append("priority=100,udp,in_port=1,tp_dst=%d,actions=%s"
                     % (dport, ",".join(acts)))
    flows.append("priority=100,udp6,in_port=1,tp_dst=0,"
                  "actions=set_field:10.0.0.2->tun_dst,set_field:7->tun_id,"
                  "output:10")
    # Out of the tunnel: each flow marks the frame's source MAC.
    vnis = [rng.getrandbits(id_bits) for _ in range(3)]
    for i in range(6):
        m = ["in_port=10", "tun_id=%d" % rng.choice(vnis)]
        if rng.random() < 0.5:
            m.append("tun_src=%s" % rng.choice(sorted(NEIGHBOURS)))
        if rng.random() < 0.2:
            m.append("tun_flags=%s" % rng.choice(["+oam", "-oam"]))
        if kind == "geneve" and rng.random() < 0.5:
            m.append("tun_metadata0=%s" % rng.choice(["0x1", "0x2",
                                                      "0x1/0x1"]))
        flows.append("priority=%d,%s,actions=mod_dl_src:02:00:00:00:01:%02x,"
                     "output:1" % (50 + i, ",".join(m), i + 1))
    flows.append("priority=1,in_port=10,actions=mod_dl_src:02:00:00:00:01:99,"
                 "output:1")
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write("\n".join(flows) + "\n")
    with open(os.path.join(outdir, "kind.txt"), "w") as f:
        f.write(kind + "\n")
    with open(os.path.join(outdir, "tlv.txt"), "w") as f:
        f.write(",".join(TLV_MAP) + "\n" if kind == "geneve" else "")

    encap = [inner_frame(rng, rng.randrange(0, 5), n) for n in range(30)]
    decap = []
    for n in range(40):
        inner = inner_frame(rng, 9, 100 + n)
        src = rng.choice(sorted(NEIGHBOURS) + [STRANGER])
        vni = rng.choice(vnis + [rng.getrandbits(id_bits)])
        tos = rng.choice([0, 0x20, 0x2])
        ttl = rng.choice([64, 3])
        opts = geneve_options(rng) if kind == "geneve" else b""
        r = rng.random()
        args = (rng, local_mac, kind, src, LOCAL_IP, vni, inner, tos, ttl,
                opts)
        if r < 0.08:
            # Not for the switch's address.
            decap.append(outer_frame(*args[:4], "10.0.0.77", *args[5:]))
        elif r < 0.14 and kind != "gre":
            # Another UDP port.
            decap.append(outer_frame(*args, dport=4790))
        elif r < 0.2:
            # Truncated in the tunnel header or the inner frame.
            decap.append(outer_frame(*args)[:rng.randrange(36, 60)])
        else:
            decap.append(outer_frame(*args))
    for name, frames in (("encap", encap), ("decap", decap)):
        g.write_pcap(os.path.join(outdir, name + ".pcap"),
                     [(1000 * i, f) for i, f in enumerate(frames)])
        with open(os.path.join(outdir, name + ".txt"), "w") as f:
            f.write("".join(fr.hex() + "\n" for fr in frames))


def normalise(frame):
    """'frame' with an outer UDP tunnel's source port and checksum zeroed."""
    if len(frame) < 42 or frame[12:14] != b"\x08\x00":
        return frame
    ihl = (frame[14] & 0xF) * 4
    if frame[23] != 17:
        return frame
    u = 14 + ihl
    dport = struct.unpack("!H", frame[u + 2:u + 4])[0]
    if dport not in UDP_PORT.values():
        return frame
    return frame[:u] + b"\0\0" + frame[u + 2:u + 6] + b"\0\0" + frame[u + 8:]


def compare(a, b):
    # As sets of frames: flowdp's datapath sends a batch's packets flow by
    # flow (as Open vSwitch's own batching datapath may), where
    # netdev-dummy/receive hands Open vSwitch one frame at a time.
    fa = sorted(normalise(f) for _, f in g.read_pcap(a))
    fb = sorted(normalise(f) for _, f in g.read_pcap(b))
    for i in range(max(len(fa), len(fb))):
        x = fa[i].hex() if i < len(fa) else "(none)"
        y = fb[i].hex() if i < len(fb) else "(none)"
        if x != y:
            print("frame %d differs (%d frames in %s, %d in %s):\n- %s\n+ %s"
                  % (i, len(fa), a, len(fb), b, x, y))
            return 1
    return 0


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3], *sys.argv[4:])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
