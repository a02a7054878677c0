#!/usr/bin/env python3
"""Capture files for the tunnel tests (tests/tunnel.at), built from scratch.

  tunnel-gen.py decap DIR     DIR/in.pcap, what arrives on the underlay
                              port 1: tunnel packets for the local
                              addresses (VXLAN VNI 5 from 10.0.0.2, Geneve
                              over IPv6 from 2001:db8::2 with one option,
                              GRE key 77 from 10.0.0.3), an unknown VNI, a
                              truncated VXLAN packet, UDP to port 4789 for
                              an address that is not local; and
                              DIR/expect-2.pcap (the three inner frames)
                              and DIR/expect-3.pcap (the foreign UDP packet
                              as it came)
  tunnel-gen.py inner FILE    three inner frames (UDP, TCP, ICMP over
                              IPv4) to send into a tunnel
  tunnel-gen.py split IN N OUT...
                              the packets of capture IN, N to each OUT in
                              turn
  tunnel-gen.py check KIND SRC DST KEY OUT INNER
                              checks that each packet of capture OUT is
                              the packet of the same place in INNER
                              encapsulated in KIND (vxlan, geneve, gre)
                              from SRC to DST with key KEY: every byte of
                              the outer header as built here, but the UDP
                              source port, which must be in 32768..60999,
                              and the checksums, which must verify; prints
                              one line per packet
Only the standard library (as tests/pcapgen.py).
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen  # noqa: E402  (the pcap and checksum helpers)

LOCAL_MAC = "02:00:00:00:00:01"
GW_MAC = "02:00:00:00:00:02"


def addr(s):
    return pcapgen.ip6(s) if ":" in s else pcapgen.ip4(s)


def inner_frames():
    """Three inner frames, each different in protocol and size."""
    src, dst = "192.168.0.1", "192.168.0.2"
    out = []
    for i, (proto, payload) in enumerate(((17, b"u" * 30),
                                          (6, b"t" * 50),
                                          (1, b"i" * 20))):
        if proto == 17:
            l4 = struct.pack("!HHHH", 1234, 53, 8 + len(payload), 0) + payload
        elif proto == 6:
            l4 = struct.pack("!HHIIBBHHH", 1234, 80, 1, 0, 0x50, 0x02, 512,
                             0, 0) + payload
        else:
            l4 = struct.pack("!BBHHH", 8, 0, 0, 1, i) + payload
            l4 = l4[:2] + struct.pack("!H", pcapgen.csum(l4)) + l4[4:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), i, 0, 64,
                         proto, 0, pcapgen.ip4(src), pcapgen.ip4(dst))
        ip = ip[:10] + struct.pack("!H", pcapgen.csum(ip)) + ip[12:]
        out.append(pcapgen.eth("50:54:00:00:00:02", "50:54:00:00:00:01",
                               0x0800, ip + l4))
    return out


def outer(kind, src, dst, key, inner, sport, tos=0, ttl=64, df=True,
          csum=False, opts=b""):
    """'inner' encapsulated, as flowdp (and Open vSwitch) build it."""
    v6 = ":" in dst
    proto = 47 if kind == "gre" else 17
    if kind == "vxlan":
        tnl = struct.pack("!II", 0x08000000, (key & 0xFFFFFF) << 8)
    elif kind == "geneve":
        crit, i = False, 0
        while i < len(opts):
            crit |= bool(opts[i + 2] & 0x80)
            i += 4 + 4 * (opts[i + 3] & 0x1F)
        tnl = struct.pack("!BBHI", len(opts) // 4, 0x40 if crit else 0,
                          0x6558, (key & 0xFFFFFF) << 8) + opts
    else:
        flags = (0x8000 if csum else 0) | (0x2000 if key is not None else 0)
        tnl = struct.pack("!HH", flags, 0x6558)
        if csum:
            tnl += b"\0\0\0\0"
        if key is not None:
            tnl += struct.pack("!I", key)
    body = tnl + inner
    if kind == "gre" and csum:
        c = pcapgen.csum(body)
        body = body[:4] + struct.pack("!H", c) + body[6:]
    if proto == 17:
        udp = struct.pack("!HHHH", sport, {"vxlan": 4789,
                                           "geneve": 6081}[kind],
                          8 + len(body), 0) + body
        if v6 or csum:
            if v6:
                pseudo = addr(src) + addr(dst) + struct.pack(
                    "!IxxxB", len(udp), 17)
            else:
                pseudo = addr(src) + addr(dst) + struct.pack(
                    "!xBH", 17, len(udp))
            c = pcapgen.csum(pseudo + udp) or 0xFFFF
            udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        body = udp
    if v6:
        ip = struct.pack("!IHBB16s16s", 6 << 28 | tos << 20, len(body),
                         proto, ttl, addr(src), addr(dst))
        return pcapgen.eth(LOCAL_MAC, GW_MAC, 0x86DD, ip + body)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(body), 0,
                     0x4000 if df else 0, ttl, proto, 0, addr(src),
                     addr(dst))
    ip = ip[:10] + struct.pack("!H", pcapgen.csum(ip)) + ip[12:]
    return pcapgen.eth(LOCAL_MAC, GW_MAC, 0x0800, ip + body)


def swap_macs(frame):
    return frame[6:12] + frame[0:6] + frame[12:]


def decap(d):
    inner = inner_frames()
    opt = struct.pack("!HBB", 0x0102, 0x05, 1) + b"\xaa\xbb\xcc\xdd"
    vx = outer("vxlan", "10.0.0.2", "10.0.0.1", 5, inner[0], 50000)
    gn = outer("geneve", "2001:db8::2", "2001:db8::1", 0, inner[1], 50001,
               opts=opt)
    gr = outer("gre", "10.0.0.3", "10.0.0.1", 77, inner[2], 0)
    unknown = outer("vxlan", "10.0.0.2", "10.0.0.1", 6, inner[0], 50000)
    foreign = outer("vxlan", "10.0.0.2", "10.0.0.99", 5, inner[0], 50000)
    # Its lengths agree, but the VXLAN header is cut short.
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + 4, 0, 0x4000, 64, 17,
                     0, pcapgen.ip4("10.0.0.2"), pcapgen.ip4("10.0.0.1"))
    ip = ip[:10] + struct.pack("!H", pcapgen.csum(ip)) + ip[12:]
    truncated = pcapgen.eth(LOCAL_MAC, GW_MAC, 0x0800, ip + struct.pack(
        "!HHHH", 50000, 4789, 12, 0) + b"\x08\0\0\0")
    pkts = [vx, unknown, gn, truncated, gr, foreign]
    pcapgen.write_pcap(os.path.join(d, "in.pcap"),
                       [(1000000 + i, p) for i, p in enumerate(pkts)])
    pcapgen.write_pcap(os.path.join(d, "expect-2.pcap"),
                       [(1000000 + i, p) for i, p in ((0, inner[0]),
                                                      (2, inner[1]),
                                                      (4, inner[2]))])
    pcapgen.write_pcap(os.path.join(d, "expect-3.pcap"),
                       [(1000005, foreign)])


def check(kind, src, dst, key, out_path, inner_path):
    outs = [p for _, p in pcapgen.read_pcap(out_path)]
    inners = [p for _, p in pcapgen.read_pcap(inner_path)]
    if len(outs) != len(inners):
        raise SystemExit("%s: %d packets, %s has %d" % (out_path, len(outs),
                                                         inner_path,
                                                         len(inners)))
    key = None if key == "none" else int(key, 0)
    v6 = ":" in dst
    l4 = 14 + (40 if v6 else 20)
    for i, (got, inner) in enumerate(zip(outs, inners)):
        sport = 0
        if kind != "gre":
            sport = struct.unpack("!H", got[l4:l4 + 2])[0]
            if not 32768 <= sport <= 60999:
                raise SystemExit("packet %d: UDP source port %d out of "
                                 "32768..60999" % (i, sport))
        ttl = got[14 + 7] if v6 else got[14 + 8]
        tos = (struct.unpack("!I", got[14:18])[0] >> 20 & 0xFF if v6
               else got[15])
        want = outer(kind, src, dst, key, inner, sport, tos=tos, ttl=ttl)
        # The outer Ethernet addresses: flowdp sends to the gateway.
        want = swap_macs(want)
        if got != want:
            for j, (a, b) in enumerate(zip(got, want)):
                if a != b:
                    break
            else:
                j = min(len(got), len(want))
            raise SystemExit("packet %d: differs at byte %d (%d bytes, "
                             "want %d)\n got  %s\n want %s"
                             % (i, j, len(got), len(want), got.hex(),
                                want.hex()))
        print("packet %d: %s from %s to %s key %s tos %#x ttl %d: ok"
              % (i, kind, src, dst, key, tos, ttl))


def main(argv):
    if len(argv) == 3 and argv[1] == "decap":
        decap(argv[2])
    elif len(argv) == 3 and argv[1] == "inner":
        pcapgen.write_pcap(argv[2], [(2000000 + i, p)
                                     for i, p in enumerate(inner_frames())])
    elif len(argv) >= 5 and argv[1] == "split":
        pkts = pcapgen.read_pcap(argv[2])
        n = int(argv[3])
        outs = argv[4:]
        if len(pkts) != n * len(outs):
            raise SystemExit("%s: %d packets, not %d" % (argv[2], len(pkts),
                                                         n * len(outs)))
        for i, out in enumerate(outs):
            pcapgen.write_pcap(out, pkts[i * n:(i + 1) * n])
    elif len(argv) == 8 and argv[1] == "check":
        check(*argv[2:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
