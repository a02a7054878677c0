#!/usr/bin/env python3
"""Random workloads for "flowdp-ctl classify": flows and packets.

usage: classify-gen.py --seed N --flows N --packets N --masks N FLOWS PACKETS

Flows mix exact 5-tuples, prefixes and arbitrary masks (and, with
--ranges, FIELD=LO-HI ranges) over TCP/UDP 5-tuples and in_port, drawn
from at most --masks distinct masks, with priorities from a small set so
that ties are common.  With --ranges, about a third of the flows and
packets are of other kinds that put ranges on every other kind of field:
ipv6_label (20-bit hex), vlan_tci and dl_vlan, nw_ttl and nw_tos (IPv4 and
IPv6), pkt_mark, icmp_type, arp_spa and arp_sha, dl_dst (MAC), and the
connection-tracking fields (ct_mark, ct_zone, 128-bit ct_label, the
original direction's IPv4 and IPv6 addresses and ports, with the ct_state
their prerequisites need, which a packet carries too).  Half the
packets are aimed inside a random flow.  The expected answers come from
"flowdp-ctl classify --linear" (a scan of every flow), not from here.
"""

import argparse
import ipaddress
import random


def ip(v):
    return "%d.%d.%d.%d" % (v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255)


FIELDS = [  # name, width, formatter
    ("nw_src", 32, ip),
    ("nw_dst", 32, ip),
    ("tp_src", 16, str),
    ("tp_dst", 16, str),
    ("in_port", 16, str),
]


def mac(v):
    return ":".join("%02x" % ((v >> s) & 255) for s in range(40, -8, -8))


def hexn(digits):
    return lambda v: "%#0*x" % (digits + 2, v)


def ip6(v):
    return str(ipaddress.IPv6Address(v))


# Other kinds of flows, for --ranges: shorthand, then fields as (name,
# width, formatter, step).  Values are multiples of 'step' (nw_tos is the
# TOS byte with the two ECN bits clear).  vlan_tci values carry the
# VLAN-present bit 0x1000; dl_vlan is its 12-bit VID view.
EXTRA_KINDS = [
    ("ip", [("nw_tos", 8, str, 4), ("nw_ttl", 8, str, 1),
            ("nw_src", 32, ip, 1)]),
    ("ipv6", [("ipv6_label", 20, hexn(5), 1), ("nw_ttl", 8, str, 1),
              ("nw_tos", 8, str, 4)]),
    ("icmp", [("icmp_type", 8, str, 1), ("nw_ttl", 8, str, 1)]),
    ("arp", [("arp_spa", 32, ip, 1), ("arp_sha", 48, mac, 1)]),
    ("", [("pkt_mark", 32, hexn(1), 1), ("dl_dst", 48, mac, 1),
          ("vlan_tci", 16, hexn(4), 1)]),
    ("", [("dl_vlan", 12, str, 1), ("dl_dst", 48, mac, 1)]),
    ("ct_state=+trk+est", [("ct_mark", 32, hexn(1), 1),
                           ("ct_zone", 16, str, 1),
                           ("ct_label", 128, hexn(1), 1)]),
    ("ip,ct_state=+trk+new,ct_nw_proto=6",
     [("ct_nw_dst", 32, ip, 1), ("ct_tp_dst", 16, str, 1),
      ("ct_nw_src", 32, ip, 1)]),
    ("ipv6,ct_state=+trk+rpl", [("ct_ipv6_src", 128, ip6, 1),
                                ("ct_mark", 32, hexn(1), 1)]),
]


def extra_value(rng, name, width, step):
    # Values near a few centres, so that ranges overlap and packets hit.
    v = (rng.randrange(3) << (width - 2)) + rng.randrange(400) * step
    v &= (1 << width) - 1
    v -= v % step
    if name == "vlan_tci":
        v = 0x1000 | (v & 0xfff)
    return v


def extra_flow(rng, kind, priority, cookie):
    proto, fields = kind
    parts = ["priority=%d" % priority, "cookie=%#x" % cookie]
    if proto:
        parts.append(proto)
    cons = {}
    for i, (name, width, fmt, step) in enumerate(fields):
        r = rng.random()
        if r < 0.2 and (cons or i + 1 < len(fields)):
            continue            # At least one field is constrained.
        lo = extra_value(rng, name, width, step)
        if r < 0.8:
            top = 0x1fff if name == "vlan_tci" else (1 << width) - step
            hi = max(lo, min(top, lo + rng.randrange(1, 120) * step))
            cons[name] = (lo, hi)
            parts.append("%s=%s-%s" % (name, fmt(lo), fmt(hi)))
        else:
            cons[name] = (lo, lo)
            parts.append("%s=%s" % (name, fmt(lo)))
    return ",".join(parts) + ",actions=drop", cons


def extra_packet(rng, kind, cons):
    proto, fields = kind
    parts = [proto] if proto else []
    for name, width, fmt, step in fields:
        v = extra_value(rng, name, width, step)
        if name in cons and rng.random() < 0.9:
            lo, hi = cons[name]
            v = lo + rng.randrange((hi - lo) // step + 1) * step
        if name == "dl_vlan":
            # A packet gives the whole TCI: VLAN present, this VID.
            name, fmt, v = "vlan_tci", hexn(4), 0x1000 | v
        parts.append("%s=%s" % (name, fmt(v)))
    return ",".join(parts)


def make_mask(rng, kind, width):
    full = (1 << width) - 1
    if kind == "exact":
        return full
    if kind == "prefix":
        n = rng.randint(0, width)
        return full ^ ((1 << (width - n)) - 1)
    if kind == "none":
        return 0
    return rng.getrandbits(width)


def masks(rng, n):
    out = []
    for _ in range(n):
        proto = rng.choice(["tcp", "udp"])
        m = {}
        while sum(1 for v in m.values() if v) < 2:
            for name, width, _ in FIELDS:
                kind = rng.choice(["exact", "exact", "prefix", "none",
                                   "arbitrary"])
                if name == "in_port" and kind in ("prefix", "arbitrary"):
                    kind = "exact"      # in_port takes no mask.
                m[name] = make_mask(rng, kind, width)
        out.append((proto, m))
    return out


def small(rng, width):
    # Few distinct values, so that flows overlap and packets hit them.
    v = rng.randrange(4)
    return (v * 0x01010101 | rng.randrange(4)) & ((1 << width) - 1)


def flow_text(rng, proto, m, values, priority, cookie, ranges):
    parts = ["priority=%d" % priority, "cookie=%#x" % cookie, proto]
    for name, width, fmt in FIELDS:
        mask = m[name]
        if not mask:
            continue
        value = values[name] & mask
        full = (1 << width) - 1
        if ranges and rng.random() < 0.3:
            lo = max(0, values[name] - rng.randrange(3))
            hi = min(full, values[name] + rng.randrange(300))
            parts.append("%s=%s-%s" % (name, fmt(lo), fmt(hi)))
        elif mask == full:
            parts.append("%s=%s" % (name, fmt(value)))
        elif name.startswith("nw_"):
            parts.append("%s=%s/%s" % (name, ip(value), ip(mask)))
        else:
            parts.append("%s=%#x/%#x" % (name, value, mask))
    return ",".join(parts) + ",actions=drop"


def packet_text(proto, values):
    return ",".join([proto] + ["%s=%s" % (name, fmt(values[name]))
                               for name, _, fmt in FIELDS])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--flows", type=int, required=True)
    ap.add_argument("--packets", type=int, required=True)
    ap.add_argument("--masks", type=int, required=True)
    ap.add_argument("--ranges", action="store_true",
                    help="also write FIELD=LO-HI ranges (pipapo)")
    ap.add_argument("flows_file")
    ap.add_argument("packets_file")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    mask_list = masks(rng, args.masks)
    flows = []
    extras = []
    with open(args.flows_file, "w") as f:
        for cookie in range(1, args.flows + 1):
            if args.ranges and rng.random() < 0.3:
                kind = rng.choice(EXTRA_KINDS)
                priority = rng.choice(list(range(0, 100, 10)) + [32768])
                text, cons = extra_flow(rng, kind, priority, cookie)
                extras.append((kind, cons))
                f.write(text + "\n")
                continue
            proto, m = rng.choice(mask_list)
            values = {name: small(rng, width) for name, width, _ in FIELDS}
            priority = rng.choice(list(range(0, 100, 10)) + [32768])
            flows.append((proto, m, values))
            f.write(flow_text(rng, proto, m, values, priority, cookie,
                              args.ranges) + "\n")
    with open(args.packets_file, "w") as f:
        for _ in range(args.packets):
            if extras and rng.random() < 0.3:
                kind, cons = rng.choice(extras)
                if rng.random() < 0.5:
                    kind = rng.choice(EXTRA_KINDS)
                f.write(extra_packet(rng, kind, cons) + "\n")
                continue
            proto = rng.choice(["tcp", "udp"])
            values = {name: small(rng, width) for name, width, _ in FIELDS}
            if flows and rng.random() < 0.5:
                fproto, m, fvalues = rng.choice(flows)
                proto = fproto
                for name, _, _ in FIELDS:
                    values[name] = ((values[name] & ~m[name])
                                    | (fvalues[name] & m[name]))
            f.write(packet_text(proto, values) + "\n")


if __name__ == "__main__":
    main()
