#!/usr/bin/env python3
"""ARP and ND frames for the underlay's tests (tests/underlay.at).

  underlay.py arp FILE OP ETH_DST SHA SPA THA TPA
        an ARP frame (OP 1 request, 2 reply), padded to 60 bytes as on a
        wire, written as a one-packet capture to FILE, or with FILE "-"
        printed as one line of hex, unpadded (42 bytes: what flowdp sends)
  underlay.py nd FILE TYPE ETH_DST ETH_SRC SRC DST TARGET OPT LLADDR FLAGS
        an ICMPv6 neighbour solicitation (TYPE 135) or advertisement (136)
        with a link-layer address option OPT (1 source, 2 target; 0 none)
        of LLADDR, flags byte FLAGS (0x60: solicited and override), the
        checksum computed byte by byte; FILE as for arp
  underlay.py cat OUT IN...
        the packets of captures IN... one after the other in OUT
  underlay.py show FILE
        one line of hex per packet of capture FILE

Only the standard library.
"""

import socket
import struct
import sys

PCAP_MAGIC = 0xA1B2C3D4


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("=IHHiIII", PCAP_MAGIC, 2, 4, 0, 0, 65535, 1))
        for i, data in enumerate(frames):
            f.write(struct.pack("=IIII", 1000 + i, 0, len(data), len(data)))
            f.write(data)


def read_pcap(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 24 or struct.unpack("=I", raw[:4])[0] != PCAP_MAGIC:
        raise SystemExit("%s: not a microsecond pcap file" % path)
    frames, off = [], 24
    while off < len(raw):
        _, _, caplen, _ = struct.unpack("=IIII", raw[off:off + 16])
        off += 16
        frames.append(raw[off:off + caplen])
        off += caplen
    return frames


def mac(s):
    b = bytes(int(x, 16) for x in s.split(":"))
    if len(b) != 6:
        raise SystemExit("%s: not a MAC" % s)
    return b


def arp(op, eth_dst, sha, spa, tha, tpa):
    return (mac(eth_dst) + mac(sha) + b"\x08\x06"
            + struct.pack("!HHBBH", 1, 0x0800, 6, 4, op)
            + mac(sha) + socket.inet_aton(spa) + mac(tha)
            + socket.inet_aton(tpa))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def nd(typ, eth_dst, eth_src, src, dst, target, opt, lladdr, flags):
    msg = struct.pack("!BBHB3x", typ, 0, 0, flags)
    msg += socket.inet_pton(socket.AF_INET6, target)
    if opt:
        msg += struct.pack("!BB", opt, 1) + mac(lladdr)
    s6 = socket.inet_pton(socket.AF_INET6, src)
    d6 = socket.inet_pton(socket.AF_INET6, dst)
    pseudo = s6 + d6 + struct.pack("!I3xB", len(msg), 58)
    c = csum(pseudo + msg)
    msg = msg[:2] + struct.pack("!H", c) + msg[4:]
    ip6 = struct.pack("!IHBB", 0x60000000, len(msg), 58, 255) + s6 + d6
    return mac(eth_dst) + mac(eth_src) + b"\x86\xdd" + ip6 + msg


def emit(path, frame, pad):
    if path == "-":
        print(frame.hex())
    else:
        if pad and len(frame) < 60:
            frame += bytes(60 - len(frame))
        write_pcap(path, [frame])


def main(argv):
    if len(argv) >= 2 and argv[1] == "arp" and len(argv) == 9:
        emit(argv[2], arp(int(argv[3]), *argv[4:9]), True)
    elif len(argv) >= 2 and argv[1] == "nd" and len(argv) == 12:
        emit(argv[2], nd(int(argv[3]), argv[4], argv[5], argv[6], argv[7],
                         argv[8], int(argv[9]), argv[10], int(argv[11], 0)),
             False)
    elif len(argv) >= 3 and argv[1] == "cat":
        frames = []
        for p in argv[3:]:
            frames += read_pcap(p)
        write_pcap(argv[2], frames)
    elif len(argv) == 3 and argv[1] == "show":
        for f in read_pcap(argv[2]):
            print(f.hex())
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
