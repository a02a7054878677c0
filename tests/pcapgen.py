#!/usr/bin/env python3
"""Capture files for the datapath tests (tests/datapath.at).

  pcapgen.py scenario DIR     writes DIR/in.pcap and, for each port the
                              flows of the "every action" scenario send
                              to, DIR/expect-N.pcap: the packets the
                              actions must produce, built from scratch
                              (every checksum computed in full), never by
                              editing the input
  pcapgen.py many FILE N      N 64-byte UDP packets to 1000 destinations
  pcapgen.py odd FILE [N SEED]  packets made to test the parser against
                              Open vSwitch's (tests/parse-pcap.at): odd
                              shapes by hand, then N random packets and
                              mutations of them from SEED (default 2000,
                              14)
  pcapgen.py traffic FILE     a few packets of each kind on one port, of
                              varied sizes, for tests/ovs-diff.at to send
                              through flowdpd and ovs-vswitchd alike
  pcapgen.py exchange DIR     DIR/p1.pcap and DIR/p2.pcap: a client on
                              port 1 and a server on port 2 talking (UDP,
                              a TCP handshake and data, ICMP echo, IPv6
                              UDP), each answer stamped between its
                              request and the next, for flowdp-ctl run
                              --ordered and the conntrack tests
  pcapgen.py compare A B      compare two captures packet by packet
  pcapgen.py show FILE        one line of hex per packet

Only the standard library: no scapy on a fresh Debian machine.
"""

import struct
import sys

# ---------------------------------------------------------------------------
# pcap files (microsecond, Ethernet), as libpcap writes them.

PCAP_MAGIC = 0xA1B2C3D4


def write_pcap(path, packets):
    """packets: list of (timestamp_usec, bytes)."""
    with open(path, "wb") as f:
        f.write(struct.pack("=IHHiIII", PCAP_MAGIC, 2, 4, 0, 0, 65535, 1))
        for ts, data in packets:
            f.write(struct.pack("=IIII", ts // 1000000, ts % 1000000,
                                len(data), len(data)))
            f.write(data)


def read_pcap(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SystemExit("%s: %s" % (path, e.strerror))
    if len(raw) < 24:
        raise SystemExit("%s: too short for a pcap file" % path)
    magic = struct.unpack("=I", raw[:4])[0]
    if magic != PCAP_MAGIC:
        raise SystemExit("%s: not a microsecond pcap file in host order"
                         % path)
    packets = []
    off = 24
    while off < len(raw):
        sec, usec, caplen, _ = struct.unpack("=IIII", raw[off:off + 16])
        off += 16
        packets.append((sec * 1000000 + usec, raw[off:off + caplen]))
        off += caplen
    return packets


# ---------------------------------------------------------------------------
# Packet building.

def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip4(s):
    return bytes(int(x) for x in s.split("."))


def ip6(s):
    head, _, tail = s.partition("::")
    h = [int(x, 16) for x in head.split(":") if x]
    t = [int(x, 16) for x in tail.split(":") if x]
    words = h + [0] * (8 - len(h) - len(t)) + t
    return struct.pack("!8H", *words)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return ~crc & 0xFFFFFFFF


def eth(dst, src, ethertype, payload, tags=()):
    """tags: (tpid, tci) pairs, outer first."""
    out = mac(dst) + mac(src)
    for tpid, tci in tags:
        out += struct.pack("!HH", tpid, tci)
    return out + struct.pack("!H", ethertype) + payload


def l4_segment(proto, sport, dport, payload, pseudo, udp_csum=True,
               icmp=None):
    """A transport segment with its checksum; 'pseudo' is the pseudo-header
    sum's bytes (src + dst addresses), or None for ICMPv4."""
    if proto == 6:
        hdr = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x18,
                          8192, 0, 0)
        seg = hdr + payload
        c = csum(pseudo + struct.pack("!BBH", 0, 6, len(seg)) + seg)
        return seg[:16] + struct.pack("!H", c) + seg[18:]
    if proto == 17:
        seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        if not udp_csum:
            return seg
        c = csum(pseudo + struct.pack("!BBH", 0, 17, len(seg)) + seg) or 0xFFFF
        return seg[:6] + struct.pack("!H", c) + seg[8:]
    if proto == 132:
        seg = struct.pack("!HHII", sport, dport, 0x1234, 0) + payload
        c = crc32c(seg)
        return seg[:8] + struct.pack("<I", c) + seg[12:]
    if proto in (1, 58):
        typ, code = icmp
        seg = struct.pack("!BBHHH", typ, code, 0, 7, 1) + payload
        if proto == 1:
            c = csum(seg)
        else:
            c = csum(pseudo + struct.pack("!IxxxB", len(seg), 58) + seg)
        return seg[:2] + struct.pack("!H", c) + seg[4:]
    raise ValueError(proto)


def ipv4(src, dst, proto, l4, tos=0, ttl=64, ident=1, frag=0, options=b""):
    ihl = 5 + len(options) // 4
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, 4 * ihl + len(l4),
                      ident, frag, ttl, proto, 0, ip4(src), ip4(dst)) + options
    c = csum(hdr)
    return hdr[:10] + struct.pack("!H", c) + hdr[12:] + l4


def ipv4_l4(src, dst, proto, sport=0, dport=0, payload=b"", udp_csum=True,
            icmp=None, **kw):
    pseudo = None if proto == 1 else ip4(src) + ip4(dst)
    seg = l4_segment(proto, sport, dport, payload, pseudo, udp_csum, icmp)
    return ipv4(src, dst, proto, seg, **kw)


def ipv6_l4(src, dst, proto, sport=0, dport=0, payload=b"", tclass=0,
            label=0, hlim=64, icmp=None):
    seg = l4_segment(proto, sport, dport, payload, ip6(src) + ip6(dst),
                     icmp=icmp)
    hdr = struct.pack("!IHBB16s16s", 6 << 28 | tclass << 20 | label,
                      len(seg), proto, hlim, ip6(src), ip6(dst))
    return hdr + seg


def arp(op, sha, spa, tha, tpa):
    return struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, mac(sha),
                       ip4(spa), mac(tha), ip4(tpa))


# ---------------------------------------------------------------------------
# The "every action" scenario.  Port 1 reads in.pcap (and writes back what
# in_port sends); the flows are in tests/datapath.at.

A = "00:00:00:00:00:01"
B = "00:00:00:00:00:02"
PAY = b"flowdp payload!"


def scenario(outdir):
    inputs = []
    expect = {1: [], 2: [], 3: []}
    ts = [1700000000 * 1000000]

    def rx(pkt, *outs):
        """A packet on port 1 and what each port must transmit for it."""
        ts[0] += 1000
        inputs.append((ts[0], pkt))
        for port, out in outs:
            expect[port].append((ts[0], out))

    # 1. TCP: mod_nw_src, mod_tp_src, dec_ttl, output:2.
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.2", 6, 1234, 80, PAY)),
       (2, eth(B, A, 0x0800, ipv4_l4("192.168.1.1", "10.0.0.2", 6, 4321,
                                      80, PAY, ttl=63))))
    # 2. UDP with ECN bits: mod_nw_dst, mod_tp_dst, mod_nw_tos (keeps ECN),
    #    output to two ports.
    out = eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.9.9.9", 17, 5000, 5353,
                                    PAY, tos=41))
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.3", 17, 5000, 53, PAY,
                                 tos=0x01)),
       (2, out), (3, out))
    # 3. UDP without a checksum: stays without one.
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.4", 17, 7, 7, PAY,
                                 udp_csum=False)),
       (2, eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.4", 17, 7, 9, PAY,
                                     udp_csum=False))))
    # 4. ICMP: mod_vlan_vid pushes a tag, output:2, strip_vlan,
    #    mod_nw_ttl, output:3 (each output sends the packet so far).
    echo = dict(icmp=(8, 0), payload=PAY)
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.5", 1, **echo)),
       (2, eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.5", 1, **echo),
               tags=[(0x8100, 100)])),
       (3, eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.5", 1, ttl=7,
                                     **echo))))
    # 5. Tagged (PCP 5, VID 10): mod_vlan_pcp, push_vlan:0x88a8 (copies
    #    the TCI), mod_vlan_vid on the new outer tag, output:2.
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.6", 6, 1, 2, PAY),
           tags=[(0x8100, 5 << 13 | 10)]),
       (2, eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.6", 6, 1, 2, PAY),
               tags=[(0x88A8, 2 << 13 | 200), (0x8100, 2 << 13 | 10)])))
    # 6. Flow 1 again with TTL 1: dec_ttl drops it.
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.2", 6, 1234, 80, PAY,
                                 ttl=1)))
    # 7. TCP over IPv6: set_field ipv6_src, mod_tp_dst, ipv6_label,
    #    dec_ttl, mod_nw_ecn, output:2.
    rx(eth(B, A, 0x86DD, ipv6_l4("2001:db8::1", "2001:db8::2", 6, 999, 80,
                                 PAY, tclass=0x20)),
       (2, eth(B, A, 0x86DD, ipv6_l4("2001:db8::99", "2001:db8::2", 6, 999,
                                     8080, PAY, tclass=0x23, label=0x12345,
                                     hlim=63))))
    # 8. ICMPv6 echo request: set_field icmp_type, ipv6_dst, output:3.
    rx(eth(B, A, 0x86DD, ipv6_l4("2001:db8::1", "2001:db8::2", 58,
                                 icmp=(128, 0), payload=PAY)),
       (3, eth(B, A, 0x86DD, ipv6_l4("2001:db8::1", "2001:db8::77", 58,
                                     icmp=(129, 0), payload=PAY))))
    # 9. ARP request answered back through in_port.
    rx(eth("ff:ff:ff:ff:ff:ff", A, 0x0806,
           arp(1, A, "10.0.0.1", "00:00:00:00:00:00", "10.1.1.1")),
       (1, eth("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:aa", 0x0806,
               arp(2, "00:11:22:33:44:55", "10.1.1.1", "00:00:00:00:00:00",
                   "10.1.1.1"))))
    # 10. SCTP: mod_tp_dst and mod_nw_dst (CRC32C recomputed).
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.8", 132, 10, 20, PAY)),
       (2, eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.88", 132, 10, 7777,
                                     PAY))))
    # 11. A miss (LLDP): dropped.
    rx(eth("01:80:c2:00:00:0e", A, 0x88CC, b"\x02\x07\x04" + bytes(40)))
    # 12. actions=drop.
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.9", 17, 1, 1, PAY)))
    # 13. controller, then output:3 (no controller here: the packet goes
    #     on).
    p13 = eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.10", 17, 1, 1, PAY))
    rx(p13, (3, p13))
    # 14. A later fragment: mod_tp_dst has no header to change; mod_nw_dst
    #     still applies.  IPv4 options are kept.
    frag = dict(frag=0x2000 | 100, options=b"\x01\x01\x01\x00")
    rx(eth(B, A, 0x0800, ipv4("10.0.0.1", "10.0.0.11", 17, PAY, **frag)),
       (2, eth(B, A, 0x0800, ipv4("10.0.0.1", "10.0.0.12", 17, PAY, **frag))))
    # 15. mod_dl_src/mod_dl_dst and output:2 on a QinQ frame, then output
    #     to the input port (dropped: OpenFlow needs in_port for that).
    qinq = [(0x88A8, 3000), (0x8100, 20)]
    rx(eth(B, A, 0x0800, ipv4_l4("10.0.0.1", "10.0.0.13", 17, 1, 2, PAY),
           tags=qinq),
       (2, eth("00:00:00:00:00:bb", "00:00:00:00:00:cc", 0x0800,
               ipv4_l4("10.0.0.1", "10.0.0.13", 17, 1, 2, PAY), tags=qinq)))

    write_pcap("%s/in.pcap" % outdir, inputs)
    for port, pkts in expect.items():
        write_pcap("%s/expect-%d.pcap" % (outdir, port), pkts)


def many(path, count):
    """'count' 64-byte UDP packets (60 bytes + FCS on the wire) to
    10.0.X.Y, 1000 destinations in turn."""
    pkts = []
    for i in range(count):
        d = i % 1000
        dst = "10.0.%d.%d" % (d // 250, d % 250)
        udp = ipv4_l4("10.1.0.1", dst, 17, 1000 + i % 7, 5000, bytes(18))
        pkts.append((1700000000 * 1000000 + i, eth(B, A, 0x0800, udp)))
    write_pcap(path, pkts)


def compare(a, b):
    pa, pb = read_pcap(a), read_pcap(b)
    bad = 0
    for i in range(max(len(pa), len(pb))):
        if i >= len(pa) or i >= len(pb):
            print("packet %d: only in %s" % (i + 1, a if i < len(pa) else b))
            bad += 1
        elif pa[i] != pb[i]:
            print("packet %d differs:\n  %s: %s\n  %s: %s"
                  % (i + 1, a, pa[i][1].hex(), b, pb[i][1].hex()))
            bad += 1
    if bad:
        print("%s and %s: %d of %d packets differ"
              % (a, b, bad, max(len(pa), len(pb))))
        return 1
    print("%s and %s: %d packets, identical" % (a, b, len(pa)))
    return 0


# ---------------------------------------------------------------------------
# Odd packets for the parser (tests/parse-pcap.at).

def ext6(next_hdr, kind, hlen=0, offlg=0):
    """An IPv6 extension header of type 'kind' (0, 43, 60: 8 * (hlen + 1)
    bytes; 51: 4 * (hlen + 2); 44: fragment with offset/flags 'offlg')."""
    if kind == 44:
        return struct.pack("!BBHI", next_hdr, 0, offlg, 0x1234)
    size = (hlen + 2) * 4 if kind == 51 else (hlen + 1) * 8
    return struct.pack("!BB", next_hdr, hlen) + bytes(size - 2)


def ipv6_chain(chain, proto, l4, tclass=0, label=0x12345, plen=None):
    """IPv6 with extension headers 'chain' ((kind, hlen, offlg) tuples)
    in front of 'l4' of protocol 'proto'."""
    body = b""
    kinds = [c[0] for c in chain] + [proto]
    for i, (kind, hlen, offlg) in enumerate(chain):
        body += ext6(kinds[i + 1], kind, hlen, offlg)
    body += l4
    first = kinds[0]
    if plen is None:
        plen = len(body)
    return struct.pack("!IHBB16s16s", 6 << 28 | tclass << 20 | label, plen,
                       first, 64, ip6("2001:db8::1"), ip6("2001:db8::2")) \
        + body


TCP_HDR = struct.pack("!HHIIBBHHH", 1234, 80, 1, 0, 0x50, 0x12, 1000, 0, 0)
UDP_HDR = struct.pack("!HHHH", 53, 5353, 8, 0)
SCTP_HDR = struct.pack("!HHII", 2905, 2906, 0, 0)


def nd_opt(kind, addr=None, units=1, body=None):
    """One neighbour discovery option: type, length in 8-byte units, and a
    link-layer address (or 'body', raw) padded to the length."""
    data = mac(addr) if body is None else body
    data = data[:units * 8 - 2] if units else data
    return struct.pack("!BB", kind, units) + data.ljust(
        max(units * 8 - 2, 0), b"\0")


def nd_message(typ, code=0, flags=0, target="2001:db8::2", opts=(),
               cut=None):
    """An ICMPv6 neighbour solicitation (135) or advertisement (136): the
    32 bits of flags and reserved, the target, the options; cut to 'cut'
    bytes if given.  The checksum is left 0 (nobody checks it here)."""
    msg = struct.pack("!BBHI16s", typ, code, 0, flags, ip6(target))
    msg += b"".join(opts)
    return msg if cut is None else msg[:cut]


def nd_shapes():
    """ND messages for Open vSwitch's parse_icmpv6() rules: each option
    kind, both, repeated (invalid), zero and overlong lengths, options of
    other kinds or sizes, a zero address before a real one, cut headers,
    flags, and the type and code that are not ND."""
    Z = "00:00:00:00:00:00"
    return [
        nd_message(135, opts=[nd_opt(1, A)]),
        nd_message(136, flags=0x60000000, opts=[nd_opt(2, B)]),
        nd_message(136, flags=0xe0000001),
        nd_message(135, opts=[nd_opt(1, A), nd_opt(2, B)]),
        nd_message(136, opts=[nd_opt(2, B), nd_opt(1, A)]),
        nd_message(135, opts=[nd_opt(1, A), nd_opt(1, B)]),
        nd_message(136, opts=[nd_opt(1, A), nd_opt(2, B), nd_opt(2, A)]),
        nd_message(135, opts=[nd_opt(1, Z), nd_opt(1, A)]),
        nd_message(135, opts=[nd_opt(5, A), nd_opt(1, A)]),
        nd_message(135, opts=[nd_opt(1, A, units=2), nd_opt(2, B)]),
        nd_message(135, opts=[nd_opt(1, A, units=0), nd_opt(2, B)]),
        nd_message(135, opts=[nd_opt(2, B), nd_opt(1, A, units=3)]),
        nd_message(135, opts=[nd_opt(1, A)], cut=24 + 7),
        nd_message(135, opts=[nd_opt(1, A)], cut=23),
        nd_message(135, cut=8),
        nd_message(136, flags=0x20000000, target="fe80::1:2:3:4"),
        nd_message(135, code=1, opts=[nd_opt(1, A)]),
        nd_message(137, opts=[nd_opt(1, A)]),
        nd_message(134, opts=[nd_opt(1, A)]),
    ]


def random_nd(rng):
    """A random neighbour solicitation or advertisement: random flags and
    target, up to four options of random kinds (mostly 1 and 2), lengths
    (mostly one unit) and addresses, sometimes cut short."""
    opts = []
    for _ in range(rng.choice((0, 1, 1, 2, 3, 4))):
        kind = rng.choice((1, 1, 2, 2, 3, 0))
        units = rng.choice((1, 1, 1, 1, 0, 2, 3))
        body = bytes(rng.getrandbits(8) for _ in range(max(units * 8 - 2,
                                                           6)))
        if rng.randrange(8) == 0:
            body = bytes(6) + body[6:]
        opts.append(nd_opt(kind, units=units, body=body))
    msg = nd_message(rng.choice((135, 136)), code=rng.choice((0, 0, 0, 1)),
                     flags=rng.getrandbits(32),
                     target="2001:db8::%x" % rng.getrandbits(16),
                     opts=opts)
    if rng.randrange(6) == 0:
        msg = msg[:rng.randrange(4, len(msg) + 1)]
    return msg


def odd_shapes():
    """Hand-made packets, each once parsed differently from OVS or close to
    a boundary of its checks."""
    e = lambda t, payload, tags=(): eth(B, A, t, payload, tags)
    v4 = lambda proto, l4, **kw: ipv4("10.0.0.1", "10.0.0.2", proto, l4, **kw)
    out = []
    # IPv6 extension headers before TCP, UDP, SCTP.
    for proto, l4 in ((6, TCP_HDR), (17, UDP_HDR), (132, SCTP_HDR)):
        out.append(e(0x86dd, ipv6_chain([(0, 0, 0)], proto, l4)))
        out.append(e(0x86dd, ipv6_chain([(43, 1, 0)], proto, l4)))
        out.append(e(0x86dd, ipv6_chain([(60, 0, 0)], proto, l4)))
        out.append(e(0x86dd, ipv6_chain([(0, 0, 0), (43, 2, 0), (60, 1, 0)],
                                        proto, l4)))
        out.append(e(0x86dd, ipv6_chain([(51, 1, 0)], proto, l4)))
    # Fragments: first, later, atomic, later after options.
    out.append(e(0x86dd, ipv6_chain([(44, 0, 0x0001)], 17, UDP_HDR)))
    out.append(e(0x86dd, ipv6_chain([(44, 0, 0x0100)], 17, UDP_HDR)))
    out.append(e(0x86dd, ipv6_chain([(44, 0, 0x0101)], 6, TCP_HDR)))
    out.append(e(0x86dd, ipv6_chain([(44, 0, 0)], 17, UDP_HDR)))
    out.append(e(0x86dd, ipv6_chain([(0, 0, 0), (44, 0, 0x0008)], 6,
                                    TCP_HDR)))
    out.append(e(0x0800, v4(17, UDP_HDR, frag=0x2000)))
    out.append(e(0x0800, v4(17, UDP_HDR, frag=0x0010)))
    # No next header; unknown next header.
    out.append(e(0x86dd, ipv6_chain([], 59, b"")))
    out.append(e(0x86dd, ipv6_chain([(60, 0, 0)], 59, bytes(8))))
    out.append(e(0x86dd, ipv6_chain([], 47, bytes(12))))
    # Truncated in the middle of a header (the lengths claim more).
    full6 = e(0x86dd, ipv6_chain([(0, 1, 0)], 6, TCP_HDR))
    for cut in (14 + 20, 14 + 40 + 4, 14 + 40 + 12, 14 + 40 + 16 + 10):
        out.append(full6[:cut])
    full4 = e(0x0800, v4(6, TCP_HDR + b"data"))
    for cut in (14, 14 + 10, 14 + 20 + 10):
        out.append(full4[:cut])
    # Extension header longer than the payload length; payload length
    # past the frame.
    out.append(e(0x86dd, ipv6_chain([(0, 3, 0)], 17, UDP_HDR, plen=16)))
    out.append(e(0x86dd, ipv6_chain([], 17, UDP_HDR, plen=200)))
    # VLAN: a tag with nothing after it, a tag then a type only, two tags,
    # three tags, 802.1ad outside.
    out.append(mac(B) + mac(A) + struct.pack("!HH", 0x8100, 0x6005))
    out.append(mac(B) + mac(A) + struct.pack("!HHH", 0x8100, 0x6005, 0x0800))
    out.append(e(0x0800, v4(17, UDP_HDR), tags=((0x8100, 0x2064),
                                                (0x8100, 0x00c8))))
    out.append(e(0x0800, v4(17, UDP_HDR), tags=((0x88a8, 0x0064),
                                                (0x8100, 0x00c8),
                                                (0x8100, 0x012c))))
    out.append(e(0x86dd, ipv6_chain([], 6, TCP_HDR), tags=((0x88a8, 5),)))
    # IPv4 options; IHL past the data; total length cutting TCP; the
    # version nibble wrong; Ethernet padding after a short UDP.
    out.append(e(0x0800, v4(6, TCP_HDR, options=b"\x01" * 8)))
    out.append(e(0x0800, v4(132, SCTP_HDR, options=b"\x01" * 40)))
    bad_ihl = bytearray(e(0x0800, v4(6, TCP_HDR)))
    bad_ihl[14] = 0x4f
    out.append(bytes(bad_ihl))
    short = bytearray(e(0x0800, v4(6, TCP_HDR)))
    short[16:18] = struct.pack("!H", 28)
    out.append(bytes(short))
    ver = bytearray(e(0x0800, v4(17, UDP_HDR)))
    ver[14] = 0x65
    out.append(bytes(ver))
    out.append(e(0x0800, v4(17, UDP_HDR)) + bytes(18))
    # Truncated TCP: a data offset past the segment, below 5.
    tcp_long = bytearray(TCP_HDR)
    tcp_long[12] = 0xf0
    out.append(e(0x0800, v4(6, bytes(tcp_long))))
    tcp_small = bytearray(TCP_HDR)
    tcp_small[12] = 0x40
    out.append(e(0x0800, v4(6, bytes(tcp_small))))
    out.append(e(0x0800, v4(6, TCP_HDR[:12])))
    # ICMP: whole, 4 bytes only; ICMPv6 echo, and neighbour discovery.
    icmp = struct.pack("!BBHHH", 8, 0, 0, 1, 1)
    out.append(e(0x0800, v4(1, icmp)))
    out.append(e(0x0800, v4(1, icmp[:4])))
    out.append(e(0x86dd, ipv6_chain([], 58, struct.pack("!BBHI", 128, 0, 0,
                                                        1))))
    out.append(e(0x86dd, ipv6_chain([], 58, struct.pack("!BBH", 128, 0, 0))))
    for nd in nd_shapes():
        out.append(e(0x86dd, ipv6_chain([], 58, nd)))
    # ND behind IPv4 (OVS parses it, nothing shows it) and behind an
    # extension header.
    out.append(e(0x0800, v4(58, nd_message(135, opts=[nd_opt(1, A)]))))
    out.append(e(0x86dd, ipv6_chain([(60, 0, 0)], 58,
                                    nd_message(136, opts=[nd_opt(2, B)]))))
    # IGMP (OVS keeps its type and code in tp_src and tp_dst), whole and
    # cut to 4 bytes.
    igmp = struct.pack("!BBH4s", 0x16, 0, 0, ip4("224.0.0.5"))
    out.append(e(0x0800, v4(2, igmp)))
    out.append(e(0x0800, v4(2, igmp[:4])))
    # 802.3: LLC, SNAP with a type, SNAP with a small type, too short.
    out.append(e(46, b"\x42\x42\x03" + bytes(43)))
    out.append(e(48, b"\xaa\xaa\x03\x00\x00\x00\x08\x00"
                 + v4(17, UDP_HDR)))
    out.append(e(48, b"\xaa\xaa\x03\x00\x00\x00\x01\x00" + bytes(40)))
    out.append(e(48, b"\xaa\xaa\x03"))
    # ARP: request, reply, an opcode past 8 bits, not Ethernet/IPv4, RARP.
    out.append(e(0x0806, arp(1, A, "10.0.0.1", "00:00:00:00:00:00",
                             "10.0.0.2")))
    out.append(e(0x0806, arp(2, B, "10.0.0.2", A, "10.0.0.1")))
    out.append(e(0x0806, arp(0x1ff, B, "10.0.0.2", A, "10.0.0.1")))
    bad_arp = bytearray(e(0x0806, arp(1, A, "10.0.0.1", B, "10.0.0.2")))
    bad_arp[14 + 4] = 8
    out.append(bytes(bad_arp))
    out.append(e(0x8035, arp(3, A, "0.0.0.0", A, "0.0.0.0")))
    out.append(e(0x0806, arp(1, A, "10.0.0.1", B, "10.0.0.2")[:20]))
    # Shorter than Ethernet.
    out.append(mac(B) + mac(A))
    return out


# Network and transport numbers the random packets use.
RANDOM_PROTOS = (6, 17, 132, 1, 58, 2, 59, 0, 43, 44, 51, 60, 47)


def random_packet(rng):
    out = bytes(rng.getrandbits(8) for _ in range(12))
    for _ in range(rng.choice((0, 0, 1, 2, 3))):
        out += struct.pack("!HH", rng.choice((0x8100, 0x88a8)),
                           rng.getrandbits(16))
    kind = rng.randrange(6)
    if kind < 2:
        proto = rng.choice(RANDOM_PROTOS)
        options = bytes(rng.getrandbits(8)
                        for _ in range(4 * rng.choice((0, 0, 0, 1, 5))))
        l4 = bytes(rng.getrandbits(8) for _ in range(rng.randrange(4, 48)))
        frag = rng.choice((0, 0, 0x2000, rng.getrandbits(13)))
        out += struct.pack("!H", 0x0800) + ipv4(
            "10.%d.%d.%d" % tuple(rng.randrange(256) for _ in range(3)),
            "10.0.0.%d" % rng.randrange(256), proto, l4,
            tos=rng.getrandbits(8), ttl=rng.randrange(256), frag=frag,
            options=options)
    elif kind < 4:
        chain = []
        for _ in range(rng.choice((0, 0, 1, 2, 3))):
            k = rng.choice((0, 43, 60, 51, 44))
            chain.append((k, rng.randrange(3),
                          rng.choice((0, 1, 8, 0x100, 0x101))))
        proto = rng.choice(RANDOM_PROTOS)
        l4 = bytes(rng.getrandbits(8) for _ in range(rng.randrange(4, 48)))
        if proto == 6 and len(l4) >= 13 and rng.randrange(4):
            l4 = l4[:12] + bytes([(5 + rng.randrange(3)) << 4]) + l4[13:]
        if proto == 58 and rng.randrange(2):
            l4 = random_nd(rng)
        out += struct.pack("!H", 0x86dd) + ipv6_chain(
            chain, proto, l4, tclass=rng.getrandbits(8),
            label=rng.getrandbits(20))
    elif kind == 4:
        out += struct.pack("!H", rng.choice((0x0806, 0x8035))) + arp(
            rng.choice((1, 2, 3, 4, 0x1ff)), A, "10.0.0.1", B, "10.0.0.2")
    else:
        out += struct.pack("!H", rng.choice((rng.randrange(0x600), 0x88cc,
                                             0x0800, 0x86dd)))
        out += bytes(rng.getrandbits(8) for _ in range(rng.randrange(60)))
    return out


def mutate(rng, pkt):
    pkt = bytearray(pkt)
    for _ in range(rng.randrange(1, 4)):
        what = rng.randrange(3)
        if what == 0:
            # Not to nothing: ovs-ofctl takes an empty packet for the end
            # of the file.
            del pkt[rng.randrange(1, len(pkt) + 1):]
        elif what == 1 and pkt:
            at = rng.randrange(len(pkt))
            for i in range(at, min(len(pkt), at + rng.randrange(1, 8))):
                pkt[i] = rng.getrandbits(8)
        elif pkt:
            pkt[rng.randrange(len(pkt))] ^= 1 << rng.randrange(8)
    return bytes(pkt)


def odd(path, count=2000, seed=14):
    import random
    rng = random.Random(seed)
    packets = odd_shapes()
    for _ in range(count):
        p = random_packet(rng)
        packets.append(p)
        packets.append(mutate(rng, p))
    write_pcap(path, [(i, p) for i, p in enumerate(packets)])


def traffic(path):
    """TCP to port 80 (4, of 4 sizes), UDP to port 53 (3), ARP requests
    (2) and one IPv6 UDP packet, all from A to B: 10 packets that the
    flows of tests/ovs-diff.at tell apart."""
    packets = []
    for i in range(4):
        packets.append(eth(B, A, 0x0800, ipv4_l4(
            "10.0.0.1", "10.0.0.2", 6, 1000 + i, 80, PAY * i)))
    for i in range(3):
        packets.append(eth(B, A, 0x0800, ipv4_l4(
            "10.0.0.1", "10.0.0.3", 17, 2000 + i, 53, PAY[:5 * i])))
    for i in range(2):
        packets.append(eth("ff:ff:ff:ff:ff:ff", A, 0x0806, arp(
            1, A, "10.0.0.1", "00:00:00:00:00:00", "10.0.0.%d" % (2 + i))))
    packets.append(eth(B, A, 0x86DD, ipv6_l4("fd00::1", "fd00::2", 17,
                                             3000, 53, PAY)))
    write_pcap(path, [(1700000000 * 1000000 + i, p)
                      for i, p in enumerate(packets)])


def tcp4(src, dst, sport, dport, seq, ack, flags, payload=b""):
    """A TCP segment over IPv4 with explicit sequence numbers and flags
    (0x02 SYN, 0x10 ACK, 0x12 SYN+ACK, 0x18 PSH+ACK, 0x11 FIN+ACK)."""
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 0x50, flags,
                      65535, 0, 0)
    seg = hdr + payload
    c = csum(ip4(src) + ip4(dst) + struct.pack("!BBH", 0, 6, len(seg)) + seg)
    return ipv4(src, dst, 6, seg[:16] + struct.pack("!H", c) + seg[18:])


def icmp4(src, dst, typ, ident, seq):
    seg = struct.pack("!BBHHH", typ, 0, 0, ident, seq) + b"ping"
    seg = seg[:2] + struct.pack("!H", csum(seg)) + seg[4:]
    return ipv4(src, dst, 1, seg)


def exchange(outdir):
    """Client 10.0.0.1 (port 1) and server 10.0.0.2 (port 2), one packet
    every 1000 us, alternating as a conversation does."""
    c, s = "10.0.0.1", "10.0.0.2"
    conv = [
        (1, eth(B, A, 0x0800, ipv4_l4(c, s, 17, 5000, 53, b"query"))),
        (2, eth(A, B, 0x0800, ipv4_l4(s, c, 17, 53, 5000, b"answer"))),
        (1, eth(B, A, 0x0800, tcp4(c, s, 40000, 80, 1000, 0, 0x02))),
        (2, eth(A, B, 0x0800, tcp4(s, c, 80, 40000, 5000, 1001, 0x12))),
        (1, eth(B, A, 0x0800, tcp4(c, s, 40000, 80, 1001, 5001, 0x10))),
        (1, eth(B, A, 0x0800, tcp4(c, s, 40000, 80, 1001, 5001, 0x18,
                                    b"GET /"))),
        (2, eth(A, B, 0x0800, tcp4(s, c, 80, 40000, 5001, 1006, 0x10))),
        (1, eth(B, A, 0x0800, icmp4(c, s, 8, 7, 1))),
        (2, eth(A, B, 0x0800, icmp4(s, c, 0, 7, 1))),
        (1, eth(B, A, 0x86DD, ipv6_l4("fd00::1", "fd00::2", 17, 6000, 53,
                                      b"query6"))),
    ]
    base = 1700000000 * 1000000
    for port in (1, 2):
        write_pcap("%s/p%d.pcap" % (outdir, port),
                   [(base + 1000 * i, pkt)
                    for i, (p, pkt) in enumerate(conv) if p == port])


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "scenario":
        scenario(args[1])
    elif len(args) == 3 and args[0] == "many":
        many(args[1], int(args[2]))
    elif len(args) in (2, 4) and args[0] == "odd":
        odd(args[1], *(int(a, 0) for a in args[2:]))
    elif len(args) == 2 and args[0] == "traffic":
        traffic(args[1])
    elif len(args) == 2 and args[0] == "exchange":
        exchange(args[1])
    elif len(args) == 3 and args[0] == "compare":
        return compare(args[1], args[2])
    elif len(args) == 2 and args[0] == "show":
        for ts, data in read_pcap(args[1]):
            print(ts, data.hex())
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
