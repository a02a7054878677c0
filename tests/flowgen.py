#!/usr/bin/env python3
"""Random flow generator for the flowdp / ovs-ofctl differential test.

    flowgen.py --seed N --count N --set {nxm,of13}

prints COUNT flows, one per line, in "ovs-ofctl add-flow" syntax.  The
output depends only on the seed, the count and the set.  Every flow is
accepted by "ovs-ofctl parse-flows" (with "-O OpenFlow13" for the of13 set)
and obeys flowdp's stricter rules:

  * no field is given twice (aliases count as the same field), at most one
    shorthand, and a shorthand never appears together with dl_type, nor a
    protocol shorthand (tcp, udp6, ...) together with nw_proto;
  * every match field has its prerequisites in the match;
  * every action is consistent with the match, in OVS's sense too:
    strip_vlan only while the flow has a VLAN header, at most two VLAN
    headers after push_vlan, and no L4 field or L4 action together with
    ip_frag=later (ovs-ofctl accepts those but cannot decode them);
  * masks only on fields that OVS lets be masked, and no mask or value has
    bits outside the field's width (arp_op stays below 256: OVS keeps
    only its low 8 bits).

Flows also repeat a token the same way ("tcp,tp_dst=80,tp_dst=80"), spell
actions in any case and as pop_vlan, dec_ttl() and controller(max_len=N),
and end in a "# comment".

bad_flows() makes flows with one wrong token each (a value beyond the
field's OpenFlow width, a mask on a field that takes none), or one that
only flowdp refuses (a value ovs-ofctl silently wraps or drops), or the one
mask a maskless field takes; ofctl-compare.py checks both programs on them.

Both sets match conj_id, metadata and the registers (reg0-15, xreg0-7)
and use the pipeline's actions in the spelling ovs-ofctl prints under
their protocol: load, move, resubmit, conjunction (alone, as OVS
requires), write_metadata at the end, and set_field on a register over
the whole field only in of13 (NXM prints it as load).  goto_table is in
the of13 set only, always last and to a later table: under NXM
ovs-ofctl prints it as resubmit(,N), which the nxm set writes instead.

The nxm set uses OpenFlow 1.0 / Nicira actions (mod_nw_src:..., strip_vlan,
...), which ovs-ofctl prints under its default protocol selection (NXM).
The of13 set uses OpenFlow 1.3 actions (set_field, push_vlan, mod_nw_ttl)
and only match forms that ovs-ofctl prints the same way under NXM and
OpenFlow 1.3 (for example it avoids dl_vlan=0xffff, which OpenFlow 1.3
prints as vlan_tci=0x0000/0x1fff instead of vlan_tci=0x0000).
"""

import argparse
import random
import sys

ETH_IP = 0x0800
ETH_ARP = 0x0806
ETH_IPV6 = 0x86DD

# Ethertypes that ovs-ofctl prints as a shorthand or that have special
# meaning; the generic "dl_type=X" class avoids them.
SPECIAL_ETHERTYPES = {ETH_IP, ETH_ARP, ETH_IPV6, 0x8035, 0x8847, 0x8848,
                      0x8100, 0x88A8, 0x9100, 0x894F}

TCP, UDP, SCTP, ICMP, ICMP6 = 6, 17, 132, 1, 58

# Flow classes: name -> (dl_type, nw_proto or None, shorthand or None).
CLASSES = {
    "any":   (None, None, None),
    "l2":    (None, None, None),       # dl_type=<generic ethertype>
    "ip":    (ETH_IP, None, "ip"),
    "ipx":   (ETH_IP, None, None),     # ip with a non-shorthand nw_proto
    "tcp":   (ETH_IP, TCP, "tcp"),
    "udp":   (ETH_IP, UDP, "udp"),
    "sctp":  (ETH_IP, SCTP, "sctp"),
    "icmp":  (ETH_IP, ICMP, "icmp"),
    "ipv6":  (ETH_IPV6, None, "ipv6"),
    "ipv6x": (ETH_IPV6, None, None),
    "tcp6":  (ETH_IPV6, TCP, "tcp6"),
    "udp6":  (ETH_IPV6, UDP, "udp6"),
    "sctp6": (ETH_IPV6, SCTP, "sctp6"),
    "icmp6": (ETH_IPV6, ICMP6, "icmp6"),
    "arp":   (ETH_ARP, None, "arp"),
}

CLASS_WEIGHTS = [
    ("any", 8), ("l2", 3), ("ip", 6), ("ipx", 3), ("tcp", 9), ("udp", 7),
    ("sctp", 4), ("icmp", 5), ("ipv6", 6), ("ipv6x", 2), ("tcp6", 6),
    ("udp6", 5), ("sctp6", 3), ("icmp6", 5), ("arp", 6),
]

TCP_FLAG_NAMES = ["fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr",
                  "ns"]

FRAG_NAMES = ["no", "yes", "first", "later", "not_later"]

# ct_state's flags, bit 0 first (Open vSwitch's ct_state_to_string()).
CT_STATE_NAMES = ["new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"]
CT_NEW, CT_EST, CT_REL, CT_RPL, CT_INV, CT_TRK, CT_SNAT, CT_DNAT = (
    1 << i for i in range(8))
# The connection-tracking tuple fields, which need a tracked connection.
CT_TUPLE_KEYS = ("ct_nw_src", "ct_nw_dst", "ct_ipv6_src", "ct_ipv6_dst",
                 "ct_nw_proto", "ct_tp_src", "ct_tp_dst")

IN_PORT_NAMES = ["LOCAL", "CONTROLLER", "NORMAL", "FLOOD", "ALL", "TABLE",
                 "IN_PORT", "local", "controller", "Local"]


class Gen:
    def __init__(self, rng, fset):
        self.r = rng
        self.fset = fset
        self.nd = None          # The ND type (135, 136) of the last match.

    # ---- small helpers ---------------------------------------------------

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    def weighted(self, pairs):
        total = sum(w for _, w in pairs)
        x = self.r.uniform(0, total)
        for item, w in pairs:
            x -= w
            if x <= 0:
                return item
        return pairs[-1][0]

    def hexdigits(self, text):
        """Randomly upper-case some hex digits."""
        if self.chance(0.7):
            return text
        if self.chance(0.5):
            return text.upper()
        return "".join(c.upper() if self.chance(0.5) else c for c in text)

    def num(self, v, bits=32, dec_only=False):
        """Spell a non-negative integer in decimal or hex."""
        if dec_only:
            return str(v)
        k = self.r.random()
        if k < 0.45 and v < 1 << 64:
            # ovs-ofctl reads decimal numbers with strtoull(): 64 bits.
            return str(v)
        if k < 0.85:
            return "0x" + self.hexdigits("%x" % v)
        # zero-padded to the field width
        width = max(1, (bits + 3) // 4)
        return "0x" + self.hexdigits("%0*x" % (width, v))

    def int_value(self, bits, maxv=None):
        if maxv is None:
            maxv = (1 << bits) - 1
        k = self.r.random()
        if k < 0.12:
            return 0
        if k < 0.24:
            return maxv
        if k < 0.40:
            return self.r.randint(0, min(maxv, 255))
        return self.r.randint(0, maxv)

    def int_mask(self, bits):
        full = (1 << bits) - 1
        k = self.r.random()
        if k < 0.12:
            return full
        if k < 0.20:
            return 0
        if k < 0.45:                    # high-order prefix
            n = self.r.randint(1, bits)
            return (full << (bits - n)) & full
        if k < 0.60:                    # low-order bits
            n = self.r.randint(1, bits)
            return (1 << n) - 1
        if k < 0.70:                    # single bit
            return 1 << self.r.randrange(bits)
        return self.r.randint(0, full)

    def masked_int(self, bits, maxv=None, mask_p=0.4):
        """value or value/mask; the value often has bits outside the mask."""
        v = self.int_value(bits, maxv)
        if not self.chance(mask_p):
            return self.num(v, bits)
        m = self.int_mask(bits)
        if maxv is not None:
            m &= maxv
        return "%s/%s" % (self.num(v, bits), self.num(m, bits))

    # ---- Ethernet ---------------------------------------------------------

    def mac_bytes(self):
        k = self.r.random()
        if k < 0.08:
            return [0] * 6
        if k < 0.14:
            return [0xFF] * 6
        if k < 0.22:
            return [0x01, 0x00, 0x5E, self.r.randrange(128),
                    self.r.randrange(256), self.r.randrange(256)]
        return [self.r.randrange(256) for _ in range(6)]

    def mac_text(self, b):
        text = ":".join("%02x" % x for x in b)
        k = self.r.random()
        if k < 0.5:
            return text
        if k < 0.75:
            return text.upper()
        return "".join(c.upper() if self.chance(0.5) else c for c in text)

    def mac_mask(self):
        k = self.r.random()
        if k < 0.15:
            return [0xFF] * 6
        if k < 0.25:
            return [0] * 6
        if k < 0.40:
            return [0x01, 0, 0, 0, 0, 0]
        if k < 0.50:
            return [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        if k < 0.70:
            n = self.r.randint(1, 48)
            v = ((1 << 48) - 1) ^ ((1 << (48 - n)) - 1)
            return list(v.to_bytes(6, "big"))
        return [self.r.randrange(256) for _ in range(6)]

    def mac(self, mask_p=0.35):
        text = self.mac_text(self.mac_bytes())
        if self.chance(mask_p):
            text += "/" + self.mac_text(self.mac_mask())
        return text

    # ---- IPv4 -------------------------------------------------------------

    def ip4_int(self):
        k = self.r.random()
        if k < 0.06:
            return 0
        if k < 0.12:
            return 0xFFFFFFFF
        if k < 0.35:
            return (10 << 24) | self.r.randrange(1 << 24)
        if k < 0.45:
            return (192 << 24) | (168 << 16) | self.r.randrange(1 << 16)
        return self.r.randrange(1 << 32)

    @staticmethod
    def ip4_text(v):
        return "%d.%d.%d.%d" % (v >> 24, (v >> 16) & 255, (v >> 8) & 255,
                                v & 255)

    def ip4(self, mask_p=0.5):
        text = self.ip4_text(self.ip4_int())
        if not self.chance(mask_p):
            return text
        k = self.r.random()
        if k < 0.35:
            return "%s/%d" % (text, self.r.randint(0, 32))
        if k < 0.55:                    # dotted contiguous
            n = self.r.randint(0, 32)
            m = (0xFFFFFFFF << (32 - n)) & 0xFFFFFFFF
            return "%s/%s" % (text, self.ip4_text(m))
        if k < 0.65:
            return "%s/%s" % (text, self.pick(["255.255.255.255", "0.0.0.0",
                                               "255.255.0.0"]))
        if k < 0.75:
            return "%s/%s" % (text, self.pick(["255.0.255.0", "0.255.0.255",
                                               "255.255.0.255",
                                               "0.0.0.255"]))
        return "%s/%s" % (text, self.ip4_text(self.r.randrange(1 << 32)))

    # ---- IPv6 -------------------------------------------------------------

    def ip6_words(self):
        r = self.r
        k = r.random()
        if k < 0.05:
            return [0] * 8
        if k < 0.10:
            return [0] * 7 + [1]
        if k < 0.16:                    # IPv4-mapped
            return [0] * 5 + [0xFFFF, r.randrange(1 << 16),
                              r.randrange(1 << 16)]
        if k < 0.20:                    # IPv4-compatible (::a.b.c.d)
            return [0] * 6 + [r.randrange(1 << 16), r.randrange(1 << 16)]
        if k < 0.24:                    # low bits only
            return [0] * 7 + [r.randrange(2, 1 << 16)]
        if k < 0.32:
            return [0xFE80, 0, 0, 0] + [r.randrange(1 << 16)
                                        for _ in range(4)]
        if k < 0.42:
            return [0x2001, 0x0DB8] + [r.randrange(1 << 16) if self.chance(
                0.4) else 0 for _ in range(6)]
        if k < 0.47:
            return [0xFFFF] * 8
        # random words with random zero runs
        words = [r.randrange(1 << 16) for _ in range(8)]
        for _ in range(r.randint(0, 3)):
            start = r.randrange(8)
            length = r.randint(1, 4)
            for i in range(start, min(8, start + length)):
                words[i] = 0
        return words

    def ip6_text(self, words):
        r = self.r
        k = r.random()
        if k < 0.15:                    # fully expanded with leading zeros
            text = ":".join("%04x" % w for w in words)
        elif k < 0.30:                  # expanded, no leading zeros
            text = ":".join("%x" % w for w in words)
        else:                           # compress one zero run (any run)
            runs = []
            i = 0
            while i < 8:
                if words[i] == 0:
                    j = i
                    while j < 8 and words[j] == 0:
                        j += 1
                    runs.append((i, j))
                    i = j
                else:
                    i += 1
            dotted = (self.chance(0.3) and words[6:] != [0, 0]
                      and words[:5] == [0] * 5)
            if dotted or self.chance(0.05):
                tail = "%d.%d.%d.%d" % (words[6] >> 8, words[6] & 255,
                                        words[7] >> 8, words[7] & 255)
                head = words[:6]
                hruns = [(a, min(b, 6)) for a, b in runs if a < 6]
                if hruns:
                    a, b = (max(hruns, key=lambda ab: ab[1] - ab[0])
                            if self.chance(0.7) else r.choice(hruns))
                    left = ":".join("%x" % w for w in head[:a])
                    right = ":".join("%x" % w for w in head[b:])
                    text = left + "::" + right
                    text += tail if b == 6 else ":" + tail
                else:
                    text = ":".join("%x" % w for w in head) + ":" + tail
            elif runs:
                if self.chance(0.7):
                    a, b = max(runs, key=lambda ab: ab[1] - ab[0])
                else:
                    a, b = r.choice(runs)
                left = ":".join("%x" % w for w in words[:a])
                right = ":".join("%x" % w for w in words[b:])
                text = left + "::" + right
            else:
                text = ":".join("%x" % w for w in words)
        return self.hexdigits(text)

    def ip6_mask_words(self):
        k = self.r.random()
        if k < 0.5:
            n = self.r.randint(0, 128)
            v = ((1 << 128) - 1) ^ ((1 << (128 - n)) - 1)
        elif k < 0.6:
            v = (1 << 128) - 1
        elif k < 0.65:
            v = 0
        elif k < 0.8:                   # non-contiguous, word-structured
            v = 0
            for i in range(8):
                if self.chance(0.5):
                    v |= 0xFFFF << (16 * i)
        else:
            v = self.r.randrange(1 << 128)
        return [(v >> (16 * (7 - i))) & 0xFFFF for i in range(8)]

    def ip6(self, mask_p=0.5):
        text = self.ip6_text(self.ip6_words())
        if not self.chance(mask_p):
            return text
        if self.chance(0.5):
            return "%s/%d" % (text, self.r.randint(0, 128))
        # ovs-ofctl reads a mask that starts with a decimal digit as a
        # prefix length ("/1::3" and "/0:0::3" are errors), so only masks
        # spelled with a leading hex letter or "::" can be used.
        words = self.ip6_mask_words()
        for _ in range(8):
            mask = self.ip6_text(words)
            if not mask[0].isdigit():
                return "%s/%s" % (text, mask)
        return "%s/%d" % (text, self.r.randint(0, 128))

    # ---- match fields -----------------------------------------------------

    def frag(self):
        name = self.pick(FRAG_NAMES)
        self.frag_later = name == "later"
        return name

    def tcp_flags(self):
        if self.chance(0.5):
            names = self.r.sample(TCP_FLAG_NAMES,
                                  self.r.randint(1, len(TCP_FLAG_NAMES)))
            return "".join(self.pick("+-") + n for n in names)
        v = self.int_value(12)
        k = self.r.random()
        if k < 0.3:
            return self.num(v, 12)
        if k < 0.4:
            return "%s/%s" % (self.num(v, 12), self.num(0xFFF, 12))
        return "%s/%s" % (self.num(v, 12), self.num(self.int_mask(12), 12))

    def vlan_fields(self):
        """Zero or more (canonical key, text) items for the VLAN header."""
        r = self.r
        k = r.random()
        out = []
        self.vlan_present = False
        dl_vlan = lambda v: ("dl_vlan", "dl_vlan=" + self.num(v, 12))
        pcp_name = lambda: self.pick(["dl_vlan_pcp", "dl_vlan_pcp",
                                      "vlan_pcp"])
        if k < 0.55:
            return out
        if k < 0.80:
            self.vlan_present = True
        if k < 0.68:
            out.append(dl_vlan(self.int_value(12)))
        elif k < 0.74:
            out.append(("dl_vlan_pcp", "%s=%d" % (pcp_name(),
                                                  r.randrange(8))))
        elif k < 0.80:
            out.append(dl_vlan(self.int_value(12)))
            out.append(("dl_vlan_pcp", "%s=%s" % (pcp_name(),
                                                  self.num(r.randrange(8),
                                                           3))))
        elif k < 0.83 and self.fset == "nxm":
            # OFP_VLAN_NONE: match packets without a VLAN header
            out.append(("dl_vlan", "dl_vlan=" + self.pick(["0xffff",
                                                           "65535"])))
        elif self.fset == "nxm":
            # arbitrary TCI value/mask
            v = self.int_value(16)
            if self.chance(0.3):
                self.vlan_present = bool(v & 0x1000)
                out.append(("vlan_tci", "vlan_tci=" + self.num(v, 16)))
            else:
                m = self.int_mask(16)
                self.vlan_present = bool(v & m & 0x1000)
                out.append(("vlan_tci", "vlan_tci=%s/%s" % (
                    self.num(v, 16), self.num(m, 16))))
        else:
            # TCI forms that OpenFlow 1.3 can carry unchanged: "no VLAN"
            # via the CFI bit alone, or a present VLAN (CFI set in value
            # and mask) with the PCP either fully or not at all masked.
            if self.chance(0.2):
                out.append(("vlan_tci", "vlan_tci=%s/%s" % (
                    self.num(self.pick([0, 0x0FFF & r.randrange(1 << 16)]),
                             16), self.num(0x1000, 16))))
            else:
                v = r.randrange(1 << 16) | 0x1000
                m = 0x1000 | (self.int_mask(12) & 0x0FFF)
                if self.chance(0.5):
                    m |= 0xE000
                self.vlan_present = True
                if self.chance(0.2) and m == 0xFFFF:
                    text = self.num(v, 16)
                else:
                    text = "%s/%s" % (self.num(v, 16), self.num(m, 16))
                out.append(("vlan_tci", "vlan_tci=" + text))
        return out

    def class_items(self, cls):
        """(canonical key, text) items that establish dl_type/nw_proto."""
        dl_type, nw_proto, short = CLASSES[cls]
        r = self.r
        dl_name = lambda: self.pick(["dl_type", "dl_type", "eth_type"])
        proto_name = lambda: self.pick(["nw_proto", "nw_proto", "ip_proto"])
        if cls == "any":
            return []
        if cls == "l2":
            while True:
                t = r.randint(0x0600, 0xFFFF)
                if t not in SPECIAL_ETHERTYPES:
                    break
            t = self.pick([t, t, 0x88CC, 0x88E5, 0x88F7, 0x9000, 0xFFFF,
                           0x0600])
            return [("dl_type", "%s=%s" % (dl_name(), self.num(t, 16)))]
        if cls in ("ipx", "ipv6x"):
            excl = {TCP, UDP, SCTP, ICMP if cls == "ipx" else ICMP6}
            while True:
                p = self.pick([0, 255, 47, 50, 51, 89, 2, 4, 41, 58, 1,
                               r.randrange(256)])
                if p not in excl:
                    break
            base = ETH_IP if cls == "ipx" else ETH_IPV6
            items = [("nw_proto", "%s=%s" % (proto_name(), self.num(p, 8)))]
            if self.chance(0.5):
                items.append(("shorthand", "ip" if cls == "ipx" else "ipv6"))
            else:
                items.append(("dl_type", "%s=%s" % (dl_name(),
                                                    self.num(base, 16))))
            return items
        k = r.random()
        if k < 0.65 or dl_type is None:
            return [("shorthand", short)]
        if nw_proto is None:
            return [("dl_type", "%s=%s" % (dl_name(), self.num(dl_type, 16)))]
        items = [("nw_proto", "%s=%s" % (proto_name(),
                                          self.num(nw_proto, 8)))]
        if k < 0.8:
            items.append(("shorthand", "ip" if dl_type == ETH_IP else "ipv6"))
        else:
            items.append(("dl_type", "%s=%s" % (dl_name(),
                                                self.num(dl_type, 16))))
        return items

    def match_items(self, cls):
        dl_type, nw_proto, _ = CLASSES[cls]
        r = self.r
        items = list(self.class_items(cls))
        cand = []          # (probability, key, function returning text)

        def port():
            if self.chance(0.15):
                return self.pick(IN_PORT_NAMES)
            return str(self.pick([1, 2, 3, 65279, r.randint(1, 65279),
                                  r.randint(1, 64)]))

        cand.append((0.25, "in_port", lambda: "in_port=" + port()))
        cand.append((0.15, "pkt_mark",
                     lambda: "pkt_mark=" + self.masked_int(32)))
        cand.append((0.25, "dl_src", lambda: "%s=%s" % (
            self.pick(["dl_src", "eth_src"]), self.mac())))
        cand.append((0.25, "dl_dst", lambda: "%s=%s" % (
            self.pick(["dl_dst", "eth_dst"]), self.mac())))
        ipv4 = dl_type == ETH_IP
        ipv6 = dl_type == ETH_IPV6
        if ipv4:
            cand.append((0.45, "nw_src", lambda: "%s=%s" % (
                self.pick(["nw_src", "ip_src"]), self.ip4())))
            cand.append((0.45, "nw_dst", lambda: "%s=%s" % (
                self.pick(["nw_dst", "ip_dst"]), self.ip4())))
        if ipv6:
            cand.append((0.45, "ipv6_src", lambda: "ipv6_src=" + self.ip6()))
            cand.append((0.45, "ipv6_dst", lambda: "ipv6_dst=" + self.ip6()))
            cand.append((0.25, "ipv6_label", lambda: "ipv6_label=" +
                         self.masked_int(20)))
        if ipv4 or ipv6:
            cand.append((0.2, "nw_tos", lambda: "nw_tos=" + self.num(
                self.pick([0, 252, r.randrange(64) * 4]), 8)))
            cand.append((0.2, "nw_ecn", lambda: "%s=%s" % (
                self.pick(["nw_ecn", "ip_ecn"]), self.num(r.randrange(4), 2))))
            cand.append((0.2, "nw_ttl", lambda: "nw_ttl=" + self.num(
                self.int_value(8), 8)))
            cand.append((0.2, "ip_frag", lambda: "%s=%s" % (
                self.pick(["ip_frag", "nw_frag"]), self.frag())))
        if nw_proto in (TCP, UDP, SCTP):
            alias = {TCP: "tcp", UDP: "udp", SCTP: "sctp"}[nw_proto]
            for d in ("src", "dst"):
                cand.append((0.45, "tp_" + d, (lambda d=d: "%s=%s" % (
                    self.pick(["tp_" + d, alias + "_" + d]),
                    self.masked_int(16)))))
        if nw_proto == TCP:
            cand.append((0.35, "tcp_flags",
                         lambda: "tcp_flags=" + self.tcp_flags()))
        self.nd = None
        if nw_proto == ICMP6 and ipv6 and self.chance(0.4):
            # Neighbour discovery: icmp_type 135 or 136 (icmp_code absent
            # or 0), then its fields (nd_sll in solicitations, nd_tll in
            # advertisements; nd_reserved and nd_options_type take no
            # mask).
            self.nd = self.pick([135, 136])
            items.append(("icmp_type", "%s=%s" % (
                self.pick(["icmp_type", "icmpv6_type"]),
                self.num(self.nd, 8))))
            if self.chance(0.3):
                items.append(("icmp_code", "icmp_code=0"))
            cand.append((0.5, "nd_target", lambda: "nd_target=" + self.ip6()))
            lla = "nd_sll" if self.nd == 135 else "nd_tll"
            cand.append((0.4, lla, lambda: lla + "=" + self.mac()))
            cand.append((0.2, "nd_reserved", lambda: "nd_reserved=" +
                         self.num(self.int_value(32), 32)))
            cand.append((0.2, "nd_options_type", lambda: "nd_options_type=" +
                         self.num(self.int_value(8), 8)))
        elif nw_proto in (ICMP, ICMP6):
            pfx = ["icmp"] if nw_proto == ICMP else ["icmp", "icmpv6"]
            for what in ("type", "code"):
                cand.append((0.45, "icmp_" + what, (
                    lambda what=what: "%s_%s=%s" % (
                        self.pick(pfx), what,
                        self.num(self.int_value(8), 8)))))
        if dl_type == ETH_ARP:
            # arp_op is 16 bits on the wire but OVS keeps only 8 of them.
            cand.append((0.4, "arp_op", lambda: "arp_op=" + self.num(
                self.int_value(8), 16)))
            cand.append((0.4, "arp_spa", lambda: "arp_spa=" + self.ip4()))
            cand.append((0.4, "arp_tpa", lambda: "arp_tpa=" + self.ip4()))
            cand.append((0.35, "arp_sha", lambda: "arp_sha=" + self.mac()))
            cand.append((0.35, "arp_tha", lambda: "arp_tha=" + self.mac()))
        self.frag_later = False
        for p, key, fn in cand:
            # ovs-ofctl accepts tp_src/tp_dst/tcp_flags together with
            # ip_frag=later but cannot decode the result (later fragments
            # carry no L4 header), so keep them apart.
            if self.frag_later and key in ("tp_src", "tp_dst", "tcp_flags",
                                           "nd_target", "nd_sll", "nd_tll",
                                           "nd_reserved", "nd_options_type"):
                continue
            if self.chance(p):
                items.append((key, fn()))
        items.extend(self.vlan_fields())
        items.extend(self.pipeline_fields())
        items.extend(self.ct_fields(dl_type))
        items.extend(self.tunnel_fields())
        return items

    def tun_flags(self):
        """A tun_flags value (oam is its one flag) in one of the
        spellings ovs-ofctl reads: +oam, -oam, oam, or a number with or
        without the one-bit mask."""
        return self.pick(["+oam", "-oam", "oam", "0", "1", "0x1", "1/1",
                          "0/1", "0x1/0x1", "0/0"])

    def tunnel_fields(self):
        """The tunnel fields (Open vSwitch's flow_tnl): (key, text) items.
        The IPv4 and IPv6 addresses share storage in flowdp (key.h), which
        refuses a match on both families, so a flow takes one family;
        tun_gbp_flags takes no mask but the exact one (ovs-ofctl accepts
        any and prints none); tun_tos and tun_ttl have no OpenFlow
        encoding."""
        out = []
        if not self.chance(0.25):
            return out
        if self.chance(0.6):
            out.append(("tun_id", "%s=%s" % (
                self.pick(["tun_id", "tun_id", "tunnel_id"]),
                self.masked_int(64))))
        if self.chance(0.5):
            v6 = self.chance(0.35)
            for d in ("src", "dst"):
                if self.chance(0.6):
                    if v6:
                        out.append(("tun_ipv6_" + d,
                                    "tun_ipv6_%s=%s" % (d, self.ip6())))
                    else:
                        out.append(("tun_" + d,
                                    "tun_%s=%s" % (d, self.ip4())))
        if self.chance(0.2):
            out.append(("tun_flags", "tun_flags=" + self.tun_flags()))
        if self.chance(0.15):
            out.append(("tun_gbp_id", "tun_gbp_id=" + self.masked_int(16)))
        if self.chance(0.15):
            out.append(("tun_gbp_flags", "tun_gbp_flags=%s%s" % (
                self.num(self.int_value(8), 8),
                "/0xff" if self.chance(0.1) else "")))
        if self.chance(0.2):
            out.extend(self.tun_metadata())
        return out

    def tun_metadata(self):
        """tun_metadataN matches as ovs-ofctl parse-flows takes them
        without a switch: each sized by its value (or its mask), laid out
        in turn; flowdp rounds each up to 4-byte slots of a 32-byte
        space, so a flow's fields take at most 32 bytes that way."""
        r = self.r
        out, used = [], 0
        for idx in r.sample(range(64), r.randint(1, 3)):
            nbytes = r.randint(1, 8)
            v = r.randrange(1 << (8 * nbytes))
            text = "0x%x" % v if self.chance(0.8) or v >= 1 << 64 \
                else str(v)
            size = max(1, (v.bit_length() + 7) // 8)
            if self.chance(0.3):
                m = r.randrange(1 << (8 * nbytes))
                text += "/0x%x" % m
                size = max(size, (m.bit_length() + 7) // 8)
            if used + (size + 3) // 4 * 4 > 32:
                break
            used += (size + 3) // 4 * 4
            out.append(("tun_metadata%d" % idx,
                        "tun_metadata%d=%s" % (idx, text)))
        return out

    def ct_state(self):
        """(text, value, mask) of a ct_state match."""
        r = self.r
        k = r.random()
        if k < 0.45:                    # +trk+est-new
            names = r.sample(range(8), r.randint(1, 8))
            v = m = 0
            text = ""
            for b in names:
                sign = self.pick("++-")
                m |= 1 << b
                v |= (1 << b) if sign == "+" else 0
                text += sign + CT_STATE_NAMES[b]
            return text, v, m
        if k < 0.6:                     # est|trk: exactly these set
            names = sorted(r.sample(range(8), r.randint(1, 4)))
            self.r.shuffle(names)
            v = sum(1 << b for b in names)
            return "|".join(CT_STATE_NAMES[b] for b in names), v, 0xFF
        v = self.int_value(8)
        if k < 0.75:
            return self.num(v, 8), v, 0xFF
        m = self.int_mask(8)
        return "%s/%s" % (self.num(v, 8), self.num(m, 8)), v & m, m

    def ct_label(self):
        """A 128-bit value: hex, or decimal when it fits 64 bits (as
        ovs-ofctl reads it)."""
        r = self.r
        v = self.pick([0, 1, (1 << 128) - 1, r.randrange(1 << 128),
                       r.randrange(1 << 64), 1 << r.randrange(128),
                       r.randrange(1 << 32) << 96])
        if v < 1 << 64 and self.chance(0.3):
            return str(v)
        if self.chance(0.2):
            return "0x" + self.hexdigits("%032x" % v)
        return "0x" + self.hexdigits("%x" % v)

    def ct_fields(self, dl_type):
        """Connection-tracking fields: (key, text) items.  The original
        direction's tuple needs a tracked connection in ct_state (Open
        vSwitch's "CT" prerequisite: +new, +est, +rel, +rpl, +snat or
        +dnat, or +trk-inv), its addresses the match's IP version, and
        ct_tp_src/ct_tp_dst a non-zero ct_nw_proto (ovs-ofctl silently
        drops them otherwise)."""
        r = self.r
        out = []
        self.ct_inv = False
        if not self.chance(0.3):
            return out
        valid = False
        if self.chance(0.8):
            text, v, m = self.ct_state()
            out.append(("ct_state", "ct_state=" + text))
            # ovs-ofctl refuses ct(commit) under a match on +inv.
            self.ct_inv = bool(v & m & CT_INV)
            valid = bool(v & (CT_NEW | CT_EST | CT_REL | CT_RPL | CT_SNAT
                              | CT_DNAT)) or (
                v & CT_TRK and m & CT_INV and not v & CT_INV)
        if self.chance(0.3):
            z = self.int_value(16)
            out.append(("ct_zone", "ct_zone=%s%s" % (
                self.num(z, 16), "/0xffff" if self.chance(0.1) else "")))
        if self.chance(0.4):
            out.append(("ct_mark", "ct_mark=" + self.masked_int(32)))
        if self.chance(0.3):
            text = self.ct_label()
            if self.chance(0.5):
                text += "/" + self.ct_label()
            out.append(("ct_label", "ct_label=" + text))
        if not valid:
            return out
        if dl_type == ETH_IP:
            for d in ("src", "dst"):
                if self.chance(0.4):
                    out.append(("ct_nw_" + d, "ct_nw_%s=%s" % (d, self.ip4())))
        if dl_type == ETH_IPV6:
            for d in ("src", "dst"):
                if self.chance(0.4):
                    out.append(("ct_ipv6_" + d,
                                "ct_ipv6_%s=%s" % (d, self.ip6())))
        if self.chance(0.4):
            proto = self.pick([6, 17, 1, 58, 132, r.randint(1, 255)])
            out.append(("ct_nw_proto", "ct_nw_proto=%s%s" % (
                self.num(proto, 8), "/0xff" if self.chance(0.1) else "")))
            for d in ("src", "dst"):
                if self.chance(0.45):
                    out.append(("ct_tp_" + d, "ct_tp_%s=%s" % (
                        d, self.masked_int(16))))
        return out

    def pipeline_fields(self):
        """conj_id, metadata and registers: (key, text) items.  An xreg is
        two regs (xreg0 is reg0:reg1), so a slot holds the xreg or some of
        its regs, never both; ovs-ofctl prints the xreg as its regs."""
        r = self.r
        out = []
        if self.chance(0.06):
            out.append(("conj_id", "conj_id=" + self.num(self.int_value(32),
                                                         32)))
        if self.chance(0.12):
            out.append(("metadata", "metadata=" + self.masked_int(64)))
        xxregs = set()
        if self.chance(0.12):
            # An xxreg is two xregs (xxreg0 is xreg0:xreg1): its slots
            # take no xreg or reg.
            for j in r.sample(range(4), r.randint(1, 2)):
                xxregs.update((2 * j, 2 * j + 1))
                out.append(("reg%d" % (4 * j), "xxreg%d=%s" % (
                    j, self.masked_int(128))))
        if self.chance(0.25):
            for x in r.sample(range(8), r.randint(1, 3)):
                if x in xxregs:
                    continue
                if self.chance(0.3):
                    out.append(("reg%d" % (2 * x), "xreg%d=%s" % (
                        x, self.masked_int(64))))
                    continue
                for reg in (2 * x, 2 * x + 1):
                    if self.chance(0.6):
                        out.append(("reg%d" % reg, "reg%d=%s" % (
                            reg, self.masked_int(32))))
        return out

    def meta_items(self):
        items = []
        self.table = 0
        if self.chance(0.35):
            items.append(("priority", "priority=" + self.num(self.pick(
                [0, 1, 65535, 32768, 32767, 32769,
                 self.r.randint(0, 65535)]), 16)))
        if self.chance(0.25):
            c = self.pick([0, 1, (1 << 64) - 2, 0x123456789ABCDEF0,
                           self.r.randrange(1 << 64),
                           self.r.randrange(1 << 32)])
            items.append(("cookie", "cookie=0x" + self.hexdigits("%x" % c)))
        if self.chance(0.2):
            self.table = self.pick([0, 1, 254, self.r.randint(0, 254)])
            items.append(("table", "table=%d" % self.table))
        for t in ("idle_timeout", "hard_timeout"):
            if self.chance(0.15):
                items.append((t, "%s=%s" % (t, self.num(self.pick(
                    [0, 1, 65535, self.r.randint(0, 65535)]), 16))))
        return items

    # ---- actions ----------------------------------------------------------

    def out_port(self):
        return self.pick([1, 2, 3, 65279, self.r.randint(1, 65279),
                          self.r.randint(1, 100)])

    def common_action(self):
        k = self.r.random()
        if k < 0.45:
            p = self.out_port()
            return "output:%d" % p if self.chance(0.5) else str(p)
        if k < 0.6:
            # IN_PORT and the reserved ports NORMAL runs (datapath/normal.c).
            return self.pick(["in_port", "IN_PORT", "NORMAL", "normal",
                              "FLOOD", "ALL", "LOCAL", "output:NORMAL",
                              "output:flood", "output:LOCAL"])
        if k < 0.8:
            name = self.pick(["controller", "CONTROLLER"])
            if self.chance(0.4):
                return name
            return "%s:%d" % (name, self.pick([0, 65535, 128,
                                               self.r.randint(0, 65535)]))
        return None

    def mod_vlan(self, action):
        # mod_vlan_vid/mod_vlan_pcp push a VLAN header when there is none.
        self.vlans = max(self.vlans, 1)
        return action

    def strip_vlan(self):
        # OVS calls strip_vlan on a flow without a VLAN header inconsistent
        # (only OpenFlow 1.0 / NXM accept it), so require one.
        if self.vlans == 0:
            return None
        self.vlans -= 1
        return "strip_vlan"

    def nxm_actions(self, cls):
        dl_type, nw_proto, _ = CLASSES[cls]
        ipany = dl_type in (ETH_IP, ETH_IPV6)
        cands = [
            lambda: self.mod_vlan("mod_vlan_vid:" + self.num(
                self.int_value(12), 12)),
            lambda: self.mod_vlan("mod_vlan_pcp:" + self.num(
                self.r.randrange(8), 3)),
            lambda: self.strip_vlan(),
            lambda: "mod_dl_src:" + self.mac(0),
            lambda: "mod_dl_dst:" + self.mac(0),
        ]
        if dl_type == ETH_IP:
            cands.append(lambda: "mod_nw_src:" + self.ip4(0))
            cands.append(lambda: "mod_nw_dst:" + self.ip4(0))
        if ipany:
            cands.append(lambda: "mod_nw_tos:" + self.num(
                self.r.randrange(64) * 4, 8))
            cands.append(lambda: "dec_ttl")
        if nw_proto in (TCP, UDP, SCTP) and not self.frag_later:
            cands.append(lambda: "mod_tp_src:" + self.num(self.int_value(16),
                                                          16))
            cands.append(lambda: "mod_tp_dst:" + self.num(self.int_value(16),
                                                          16))
        return cands

    def of13_set_field(self, cls):
        dl_type, nw_proto, _ = CLASSES[cls]
        r = self.r
        t = []      # (target names, value function)
        t.append((["dl_src", "eth_src"], lambda: self.mac(0)))
        t.append((["dl_dst", "eth_dst"], lambda: self.mac(0)))
        t.append((["pkt_mark"], lambda: self.num(self.int_value(32), 32)))
        if dl_type == ETH_IP:
            t.append((["nw_src", "ip_src"], lambda: self.ip4(0)))
            t.append((["nw_dst", "ip_dst"], lambda: self.ip4(0)))
        if dl_type == ETH_IPV6:
            t.append((["ipv6_src"], lambda: self.ip6(0)))
            t.append((["ipv6_dst"], lambda: self.ip6(0)))
            t.append((["ipv6_label"], lambda: self.num(self.int_value(20),
                                                       20)))
        if dl_type in (ETH_IP, ETH_IPV6):
            t.append((["nw_tos"], lambda: self.num(r.randrange(64) * 4, 8)))
            t.append((["nw_ecn", "ip_ecn"], lambda: self.num(r.randrange(4),
                                                             2)))
            t.append((["nw_ttl"], lambda: self.num(self.int_value(8), 8)))
        if nw_proto == TCP and not self.frag_later:
            t.append((["tp_src", "tcp_src"], lambda: self.num(
                self.int_value(16), 16)))
            t.append((["tp_dst", "tcp_dst"], lambda: self.num(
                self.int_value(16), 16)))
        if nw_proto == UDP and not self.frag_later:
            t.append((["udp_src"], lambda: self.num(self.int_value(16), 16)))
            t.append((["udp_dst"], lambda: self.num(self.int_value(16), 16)))
        if nw_proto == SCTP and not self.frag_later:
            t.append((["sctp_src"], lambda: self.num(self.int_value(16), 16)))
            t.append((["sctp_dst"], lambda: self.num(self.int_value(16), 16)))
        if nw_proto == ICMP and dl_type == ETH_IP:
            t.append((["icmp_type"], lambda: self.num(self.int_value(8), 8)))
            t.append((["icmp_code"], lambda: self.num(self.int_value(8), 8)))
        if nw_proto == ICMP6 and dl_type == ETH_IPV6:
            t.append((["icmpv6_type"], lambda: self.num(self.int_value(8),
                                                        8)))
            t.append((["icmpv6_code"], lambda: self.num(self.int_value(8),
                                                        8)))
        if dl_type == ETH_ARP:
            t.append((["arp_op"], lambda: self.num(self.int_value(8), 16)))
            t.append((["arp_spa"], lambda: self.ip4(0)))
            t.append((["arp_tpa"], lambda: self.ip4(0)))
            t.append((["arp_sha"], lambda: self.mac(0)))
            t.append((["arp_tha"], lambda: self.mac(0)))
        if self.nd and not self.frag_later:
            t.append((["nd_target"], lambda: self.ip6(0)))
            t.append((["nd_sll" if self.nd == 135 else "nd_tll"],
                      lambda: self.mac(0)))
            t.append((["nd_reserved"], lambda: self.num(self.int_value(32),
                                                        32)))
            t.append((["nd_options_type"], lambda: self.num(
                self.int_value(8), 8)))
        # The tunnel fields (tun_tos and tun_ttl are read-only).
        t.append((["tun_id", "tunnel_id"], lambda: self.num(
            self.int_value(64), 64)))
        t.append((["tun_src"], lambda: self.ip4(0)))
        t.append((["tun_dst"], lambda: self.ip4(0)))
        t.append((["tun_ipv6_src"], lambda: self.ip6(0)))
        t.append((["tun_ipv6_dst"], lambda: self.ip6(0)))
        t.append((["tun_flags"], lambda: self.tun_flags().replace(
            "0/0", "1/1")))
        t.append((["tun_gbp_id"], lambda: self.num(self.int_value(16), 16)))
        t.append((["tun_gbp_flags"], lambda: self.num(self.int_value(8),
                                                       8)))
        if self.chance(0.1):
            # set_tunnel and set_tunnel64, which ovs-ofctl -O OpenFlow13
            # prints as set_field.
            bits = self.pick([32, 64])
            return "set_tunnel%s:%s" % ("" if bits == 32 else "64",
                                        self.num(self.int_value(bits), bits))
        if self.chance(0.05):
            name = self.pick(["tun_src", "tun_dst"])
            return "set_field:%s/%d->%s" % (self.ip4(0),
                                             self.r.randint(1, 31), name)
        if dl_type == ETH_IPV6 and self.chance(0.3):
            # A masked write to an address: ovs-ofctl prints the loads.
            name = self.pick(["ipv6_src", "ipv6_dst"])
            return "set_field:%s/%d->%s" % (self.ip6(0),
                                             self.r.randint(1, 127), name)
        names, fn = self.pick(t)
        return "set_field:%s->%s" % (fn(), self.pick(names))

    def push_vlan(self):
        # OVS tracks at most two VLAN headers: push_vlan onto a flow that
        # already has two is rejected (OFPBAC_BAD_TAG).
        if self.vlans >= 2:
            return "dec_ttl" if self.ipany else self.pick(["IN_PORT", "2"])
        self.vlans += 1
        return "push_vlan:" + self.pick(["0x8100", "0x88a8", "0x88A8",
                                         "33024", "34984"])

    def of13_actions(self, cls):
        dl_type, _, _ = CLASSES[cls]
        ipany = dl_type in (ETH_IP, ETH_IPV6)
        cands = [
            lambda: self.push_vlan(),
            lambda: self.of13_set_field(cls),
            lambda: self.of13_set_field(cls),
            lambda: self.of13_set_field(cls),
        ]
        if ipany:
            cands.append(lambda: "mod_nw_ttl:" + self.num(self.int_value(8),
                                                          8))
            cands.append(lambda: "dec_ttl")
        return cands

    # ---- the pipeline's actions -------------------------------------------

    # NXM/OXM fields for load and move: (names, bits, writable, needs),
    # 'needs' a predicate on (dl_type, nw_proto).  The first name is the
    # one ovs-ofctl prints.
    def nxm_fields(self, cls):
        dl_type, nw_proto, _ = CLASSES[cls]
        ip4, ip6 = dl_type == ETH_IP, dl_type == ETH_IPV6
        l4 = not self.frag_later
        f = [(["NXM_OF_IN_PORT"], 16, True),
             (["NXM_NX_PKT_MARK"], 32, True),
             (["NXM_OF_ETH_SRC", "OXM_OF_ETH_SRC"], 48, True),
             (["NXM_OF_ETH_DST", "OXM_OF_ETH_DST"], 48, True),
             (["NXM_OF_ETH_TYPE", "OXM_OF_ETH_TYPE"], 16, False),
             (["OXM_OF_METADATA"], 64, True)]
        f += [(["NXM_NX_REG%d" % i], 32, True) for i in range(16)]
        f += [(["OXM_OF_PKT_REG%d" % i], 64, True) for i in range(8)]
        f += [(["NXM_NX_XXREG%d" % i], 128, True) for i in range(4)]
        if ip4:
            f += [(["NXM_OF_IP_SRC", "OXM_OF_IPV4_SRC"], 32, True),
                  (["NXM_OF_IP_DST", "OXM_OF_IPV4_DST"], 32, True)]
        if ip4 or ip6:
            f += [(["NXM_OF_IP_PROTO", "OXM_OF_IP_PROTO"], 8, False),
                  (["NXM_NX_IP_TTL"], 8, True)]
        if ip6:
            f += [(["NXM_NX_IPV6_SRC", "OXM_OF_IPV6_SRC"], 128, True),
                  (["NXM_NX_IPV6_DST", "OXM_OF_IPV6_DST"], 128, True),
                  (["NXM_NX_IPV6_LABEL", "OXM_OF_IPV6_FLABEL"], 20, True)]
        if l4 and nw_proto == TCP:
            f += [(["NXM_OF_TCP_SRC", "OXM_OF_TCP_SRC"], 16, True),
                  (["NXM_OF_TCP_DST", "OXM_OF_TCP_DST"], 16, True)]
        if l4 and nw_proto == UDP:
            f += [(["NXM_OF_UDP_SRC", "OXM_OF_UDP_SRC"], 16, True),
                  (["NXM_OF_UDP_DST", "OXM_OF_UDP_DST"], 16, True)]
        if l4 and nw_proto == SCTP:
            f += [(["OXM_OF_SCTP_SRC"], 16, True),
                  (["OXM_OF_SCTP_DST"], 16, True)]
        if l4 and nw_proto == ICMP and ip4:
            f += [(["NXM_OF_ICMP_TYPE", "OXM_OF_ICMPV4_TYPE"], 8, True),
                  (["NXM_OF_ICMP_CODE", "OXM_OF_ICMPV4_CODE"], 8, True)]
        if l4 and nw_proto == ICMP6 and ip6:
            f += [(["NXM_NX_ICMPV6_TYPE", "OXM_OF_ICMPV6_TYPE"], 8, True),
                  (["NXM_NX_ICMPV6_CODE", "OXM_OF_ICMPV6_CODE"], 8, True)]
        if l4 and self.nd:
            f += [(["NXM_NX_ND_TARGET", "OXM_OF_IPV6_ND_TARGET"], 128, True),
                  (["ERICOXM_OF_ICMPV6_ND_RESERVED"], 32, True),
                  (["ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE"], 8, True)]
            if self.nd == 135:
                f += [(["NXM_NX_ND_SLL", "OXM_OF_IPV6_ND_SLL"], 48, True)]
            else:
                f += [(["NXM_NX_ND_TLL", "OXM_OF_IPV6_ND_TLL"], 48, True)]
        if self.chance(0.3):
            f += [(["NXM_NX_TUN_ID", "OXM_OF_TUNNEL_ID"], 64, True),
                  (["NXM_NX_TUN_IPV4_SRC"], 32, True),
                  (["NXM_NX_TUN_IPV4_DST"], 32, True),
                  (["NXM_NX_TUN_IPV6_SRC"], 128, True),
                  (["NXM_NX_TUN_IPV6_DST"], 128, True),
                  (["NXM_NX_TUN_FLAGS"], 1, True),
                  (["NXM_NX_TUN_GBP_ID"], 16, True),
                  (["NXM_NX_TUN_GBP_FLAGS"], 8, True)]
        if dl_type == ETH_ARP:
            f += [(["NXM_OF_ARP_SPA", "OXM_OF_ARP_SPA"], 32, True),
                  (["NXM_OF_ARP_TPA", "OXM_OF_ARP_TPA"], 32, True),
                  (["NXM_NX_ARP_SHA", "OXM_OF_ARP_SHA"], 48, True),
                  (["NXM_NX_ARP_THA", "OXM_OF_ARP_THA"], 48, True)]
        return f

    def subfield(self, names, bits, n=None):
        """NAME[a..b] of N bits (random if None), in one of its spellings
        ([] for the whole field, [a] for one bit)."""
        r = self.r
        name = self.pick(names) if self.chance(0.3) else names[0]
        if n is None:
            if self.chance(0.3):
                n = bits
            else:
                n = r.randint(1, bits)
        ofs = r.randint(0, bits - n)
        if n == bits:
            text = self.pick(["[]", "[]", "", "[0..%d]" % (bits - 1)])
        elif n == 1 and self.chance(0.5):
            text = "[%d]" % ofs
        else:
            text = "[%d..%d]" % (ofs, ofs + n - 1)
        return name + text, n

    def load(self, cls):
        cands = [x for x in self.nxm_fields(cls) if x[2]]
        names, bits, _ = self.pick(cands)
        text, n = self.subfield(names, bits)
        return "load:%s->%s" % (self.num(self.int_value(n), n), text)

    def move(self, cls):
        fields = self.nxm_fields(cls)
        dnames, dbits, _ = self.pick([x for x in fields if x[2]])
        snames, sbits, _ = self.pick(fields)
        n = self.r.randint(1, min(sbits, dbits))
        if self.chance(0.2) and sbits == dbits:
            n = sbits
        src, _ = self.subfield(snames, sbits, n)
        dst, _ = self.subfield(dnames, dbits, n)
        return "move:%s->%s" % (src, dst)

    def set_register(self, full_ok):
        """set_field on metadata, a reg or an xreg.  ovs-ofctl prints one
        over the whole field as set_field under OpenFlow 1.3 but as load
        under NXM, and a masked one as loads in both."""
        r = self.r
        name, bits = self.pick([("metadata", 64), ("reg%d" % r.randrange(16),
                                                   32),
                                ("xreg%d" % r.randrange(8), 64),
                                ("xxreg%d" % r.randrange(4), 128)])
        v = self.int_value(bits)
        if full_ok and self.chance(0.5):
            if self.chance(0.2):
                return "set_field:%s/%s->%s" % (
                    self.num(v, bits), self.num((1 << bits) - 1, bits), name)
            return "set_field:%s->%s" % (self.num(v, bits), name)
        m = self.int_mask(bits)
        if m in (0, (1 << bits) - 1):
            m = 1 << r.randrange(bits)
        return "set_field:%s/%s->%s" % (self.num(v, bits), self.num(m, bits),
                                        name)

    def resubmit(self):
        r = self.r
        port = self.pick(["", "", "in_port", "IN_PORT", str(r.randint(0, 9)),
                          str(r.randint(1, 65279)), "LOCAL", "NORMAL",
                          "CONTROLLER", "local"])
        table = self.pick(["", str(r.randint(0, 254)), "254", "0"])
        if port in ("", "in_port", "IN_PORT") and not table:
            table = str(r.randint(0, 254))
        if not table and self.chance(0.5):
            return "resubmit:" + port
        return "resubmit(%s,%s)" % (port, table)

    # ---- the stack, output:FIELD, note, queues, clone, controller --------

    def stack(self, cls, op):
        """push:FIELD[a..b] (any field) or pop:FIELD[a..b] (a writable
        one), at most 64 bits."""
        fields = self.nxm_fields(cls)
        names, bits, _ = self.pick([x for x in fields if x[2]]
                                   if op == "pop" else fields)
        text, _ = self.subfield(names, bits, self.r.randint(1, min(bits, 64)))
        return "%s:%s" % (op, text)

    def output_reg(self, cls):
        names, bits, _ = self.pick(self.nxm_fields(cls))
        text, _ = self.subfield(names, bits, self.r.randint(1, min(bits, 32)))
        return "output:" + text if "[" in text else "output:%s[]" % text

    def note(self):
        r = self.r
        data = ["%02x" % r.randrange(256) for _ in range(r.randint(0, 20))]
        return "note:" + self.pick([".", ""]).join(data)

    def queue(self):
        """set_queue and pop_queue; enqueue in the OpenFlow 1.3 set only
        (ovs-ofctl prints it enqueue:P:Q under OpenFlow 1.0, and as
        set_queue:Q,output:P,pop_queue, which flowdp prints, under 1.3)."""
        r = self.r
        acts = ["set_queue:%s" % self.num(r.randrange(1 << 32), 32),
                "pop_queue"]
        if self.fset == "of13":
            acts.append(self.pick(["enqueue:%d:%d", "enqueue(%d,%d)"])
                        % (r.randint(1, 65279), r.randrange(1 << 32)))
        return self.pick(acts)

    def controller_args(self):
        r = self.r
        args = []
        if self.chance(0.5):
            args.append("reason=" + self.pick(["action", "no_match",
                                               "invalid_ttl", "action_set",
                                               "group", "packet_out"]))
        if self.chance(0.4):
            args.append("max_len=%d" % r.randrange(65536))
        if self.chance(0.4):
            args.append("id=%d" % r.randrange(65536))
        if self.chance(0.4):
            args.append("userdata=" + ".".join(
                "%02x" % r.randrange(256) for _ in range(r.randint(1, 9))))
        if self.chance(0.3):
            args.append("pause")
        if self.chance(0.3):
            args.append("meter_id=%d" % r.randrange(1 << 32))
        r.shuffle(args)
        return "controller(%s)" % ",".join(args)

    def clone(self, cls, depth=0):
        """clone() of what both corpora spell alike."""
        simple = [lambda: self.load(cls), lambda: self.move(cls),
                  lambda: self.stack(cls, "push"),
                  lambda: self.stack(cls, "pop"),
                  lambda: "output:%d" % self.r.randint(1, 65279),
                  lambda: self.note(), lambda: self.resubmit()]
        if depth < 2:
            simple.append(lambda: self.clone(cls, depth + 1))
        return "clone(%s)" % ",".join(self.pick(simple)()
                                      for _ in range(self.r.randint(0, 4)))

    def pipeline_actions(self, cls):
        of13 = self.fset == "of13"
        acts = [lambda: self.load(cls), lambda: self.move(cls),
                lambda: self.set_register(of13), lambda: self.resubmit(),
                lambda: "ct_clear"]
        if CLASSES[cls][0] in (ETH_IP, ETH_IPV6):
            acts += [lambda: self.ct(cls)] * 2
        acts += [lambda: self.stack(cls, "push"),
                 lambda: self.stack(cls, "pop"),
                 lambda: self.output_reg(cls), lambda: self.note(),
                 lambda: self.queue(), lambda: self.controller_args(),
                 lambda: self.clone(cls)]
        acts += [lambda: self.learn(cls)]
        if not of13 and CLASSES[cls][1] == TCP and not self.frag_later:
            # fin_timeout is OpenFlow 1.0/NXM only in ovs-ofctl, and
            # "inconsistent" (OpenFlow 1.0 only) without TCP.
            acts += [lambda: self.fin_timeout()]
        return acts

    # ---- learn(...) and fin_timeout(...) -----------------------------------

    # Destinations of a learned match whose prerequisites need no earlier
    # spec (names, bits, writable).
    LEARN_DSTS = [(["NXM_OF_IN_PORT"], 16, True),
                  (["NXM_NX_PKT_MARK"], 32, True),
                  (["NXM_OF_ETH_SRC", "OXM_OF_ETH_SRC", "eth_src", "dl_src"],
                   48, True),
                  (["NXM_OF_ETH_DST", "OXM_OF_ETH_DST", "eth_dst", "dl_dst"],
                   48, True),
                  (["NXM_OF_VLAN_TCI", "vlan_tci"], 16, True),
                  (["NXM_OF_ETH_TYPE", "eth_type"], 16, False),
                  (["OXM_OF_METADATA", "metadata"], 64, True)] \
        + [(["NXM_NX_REG%d" % i, "reg%d" % i], 32, True) for i in range(16)] \
        + [(["OXM_OF_PKT_REG%d" % i, "xreg%d" % i], 64, True)
           for i in range(8)]

    def learn_spec(self, cls):
        r = self.r
        srcs = self.nxm_fields(cls)
        k = r.random()
        if k < 0.25:
            dnames, dbits, _ = self.pick(self.LEARN_DSTS)
            snames, sbits, _ = self.pick(srcs)
            n = r.randint(1, min(dbits, sbits, 64))
            dst, _ = self.subfield(dnames, dbits, n)
            src, _ = self.subfield(snames, sbits, n)
            return "%s=%s" % (dst, src)
        if k < 0.4:
            names, bits, _ = self.pick([x for x in self.LEARN_DSTS
                                        if x[0][0] in [y[0][0] for y in srcs]])
            return self.subfield(names, bits)[0]
        if k < 0.55:
            return self.pick([
                lambda: "reg%d=%s" % (r.randrange(16),
                                      self.num(self.int_value(32), 32)),
                lambda: "%s=%s" % (self.pick(["eth_src", "dl_dst"]),
                                   self.mac_text(self.mac_bytes())),
                lambda: "in_port=%d" % r.randint(1, 65279),
                lambda: "metadata=%s" % self.num(self.int_value(64), 64)])()
        if k < 0.65:
            names, bits, _ = self.pick(self.LEARN_DSTS)
            n = r.randint(1, min(bits, 64) - 1)
            dst, _ = self.subfield(names, bits, n)
            return "%s=%s" % (dst, self.num(self.int_value(n), n))
        if k < 0.8:
            dnames, dbits, _ = self.pick([x for x in self.LEARN_DSTS
                                          if x[2]])
            if self.chance(0.5):
                n = r.randint(1, min(dbits, 64))
                dst, _ = self.subfield(dnames, dbits, n)
                return "load:%s->%s" % (self.num(self.int_value(n), n), dst)
            snames, sbits, _ = self.pick(srcs)
            n = r.randint(1, min(dbits, sbits, 64))
            dst, _ = self.subfield(dnames, dbits, n)
            src, _ = self.subfield(snames, sbits, n)
            return "load:%s->%s" % (src, dst)
        snames, sbits, _ = self.pick(srcs)
        return "output:%s" % self.subfield(snames, sbits)[0]

    def learn(self, cls):
        """learn(...): ovs-ofctl reads the timeouts, priority and limit
        with atoi(), so those are decimal."""
        r = self.r
        args = []
        params = [
            lambda: "table=%d" % r.randint(0, 254),
            lambda: "idle_timeout=%d" % r.randint(0, 65535),
            lambda: "hard_timeout=%d" % r.randint(0, 65535),
            lambda: "fin_idle_timeout=%d" % r.randint(0, 65535),
            lambda: "fin_hard_timeout=%d" % r.randint(0, 65535),
            lambda: "priority=%d" % r.randint(0, 65535),
            lambda: "send_flow_rem", lambda: "delete_learned",
            lambda: "cookie=%s" % self.num(self.int_value(64), 64),
            lambda: "limit=%d" % r.randint(0, 100000),
            lambda: "result_dst=%s" % self.pick(
                ["NXM_NX_REG%d[%d]" % (r.randrange(16), r.randrange(32)),
                 "reg%d[%d]" % (r.randrange(16), r.randrange(32))])]
        for p in r.sample(params, r.randint(0, 4)):
            args.append(p())
        for _ in range(r.randint(0, 4)):
            args.append(self.learn_spec(cls))
        r.shuffle(args)
        return "learn(%s)" % self.pick([",", ", "]).join(args)

    def fin_timeout(self):
        r = self.r
        args = []
        if self.chance(0.6):
            args.append("idle_timeout=%d" % r.randint(0, 65535))
        if self.chance(0.6):
            args.append("hard_timeout=%d" % r.randint(0, 65535))
        r.shuffle(args)
        return "fin_timeout(%s)" % ",".join(args)

    # ---- ct(...) ----------------------------------------------------------

    def nat_addr(self, v6, v, brackets):
        if not v6:
            return self.ip4_text(v)
        words = [(v >> (16 * (7 - i))) & 0xFFFF for i in range(8)]
        text = self.ip6_text(words)
        return "[%s]" % text if brackets else text

    def nat(self, cls, commit):
        """nat, or (with commit, which ovs-ofctl needs for a range)
        nat(src|dst[=ADDR[-ADDR][:PORT[-PORT]]][,flags]) in the flow's
        family.  The flags only with an address: ovs-ofctl drops them
        without one, flowdp refuses them (bad_ct_action_tokens())."""
        r = self.r
        if not commit or self.chance(0.3):
            return "nat"
        v6 = CLASSES[cls][0] == ETH_IPV6
        kind = self.pick(["src", "dst"])
        if self.chance(0.15):
            return "nat(%s)" % kind
        bits = 128 if v6 else 32
        lo = r.randrange(1 << bits) if not v6 else \
            int("".join("%04x" % w for w in self.ip6_words()), 16)
        # ovs-ofctl encodes an all-zero address as none at all (and then
        # cannot decode its own ports); flowdp refuses it.
        lo = lo or 1
        hi = lo
        if self.chance(0.4):
            hi = min((1 << bits) - 1, lo + r.randint(0, 1000))
        port = None
        if self.chance(0.5):
            pl = r.randint(1, 65535)
            port = (pl, pl if self.chance(0.3) else r.randint(pl, 65535))
        brackets = v6 and (port is not None or self.chance(0.3))
        text = "%s=%s" % (kind, self.nat_addr(v6, lo, brackets))
        if hi != lo or self.chance(0.1):
            text += "-" + self.nat_addr(v6, hi, brackets)
        if port:
            text += ":%d" % port[0]
            if port[1] != port[0] or self.chance(0.2):
                text += "-%d" % port[1]
        flags = []
        if self.chance(0.3):
            flags.append("persistent")
        if self.chance(0.4):
            flags.append(self.pick(["hash", "random"]))
        r.shuffle(flags)
        return "nat(%s)" % ",".join([text] + flags)

    def ct_exec(self, cls):
        """One action of exec(): set_field, load or move into ct_mark or
        ct_label.  An unmasked set_field only in of13 (NXM prints it as
        load, as it does for registers)."""
        r = self.r
        field, bits, nxm = self.pick([("ct_mark", 32, "NXM_NX_CT_MARK"),
                                      ("ct_label", 128, "NXM_NX_CT_LABEL")])
        k = r.random()
        if k < 0.35:
            v = self.int_value(bits)
            if self.fset == "of13" and self.chance(0.5):
                return "set_field:%s->%s" % ("0x%x" % v if bits > 64
                                             else self.num(v, bits), field)
            m = self.int_mask(bits) if bits <= 64 else \
                r.randrange(1, 1 << 128)
            if m in (0, (1 << bits) - 1):
                m = 1 << r.randrange(bits)
            return "set_field:0x%x/0x%x->%s" % (v & m, m, field)
        if k < 0.7:
            n = r.randint(1, min(bits, 64))
            ofs = r.randint(0, bits - n)
            sub = "[%d..%d]" % (ofs, ofs + n - 1) if n > 1 else "[%d]" % ofs
            if n == bits:
                sub = "[]"
            return "load:%s->%s%s" % (self.num(self.int_value(n), n), nxm,
                                      sub)
        snames, sbits, _ = self.pick(self.nxm_fields(cls))
        n = r.randint(1, min(sbits, bits, 64))
        src, _ = self.subfield(snames, sbits, n)
        dst, _ = self.subfield([nxm], bits, n)
        return "move:%s->%s" % (src, dst)

    def ct(self, cls):
        """A ct action that ovs-ofctl takes and prints back as flowdp
        does: keys once each, nat before exec, exec only with commit."""
        r = self.r
        commit = not getattr(self, "ct_inv", False) and self.chance(0.6)
        args = []
        if commit:
            args.append("commit")
            if self.chance(0.2):
                args.append("force")
        if self.chance(0.3):
            args.append("table=%d" % r.randint(0, 254))
        if self.chance(0.4):
            if self.chance(0.5):
                args.append("zone=%s" % self.num(r.randint(0, 65535), 16))
            else:
                cands = [x for x in self.nxm_fields(cls) if x[1] >= 16]
                names, bits, _ = self.pick(cands)
                sub, _ = self.subfield(names, bits, 16)
                args.append("zone=" + sub)
        if self.chance(0.35):
            args.append(self.nat(cls, commit))
        r.shuffle(args)
        if commit and self.chance(0.4):
            args.append("exec(%s)" % ",".join(
                self.ct_exec(cls) for _ in range(r.randint(1, 3))))
        return "ct(%s)" % ",".join(args) if args or self.chance(0.5) \
            else "ct"

    def conjunctions(self):
        r = self.r
        out = []
        for _ in range(r.randint(1, 3)):
            n = self.pick([2, 2, 3, 64, r.randint(2, 64)])
            out.append("conjunction(%s,%d/%d)" % (
                self.num(self.int_value(32), 32, dec_only=self.chance(0.5)),
                r.randint(1, n), n))
        return ",".join(out)

    def instructions(self):
        """write_metadata and goto_table, which end a list in this order.
        Under NXM ovs-ofctl prints goto_table as resubmit(,N) and cannot
        decode write_metadata before it, so the nxm set has neither
        goto_table nor (for that reason) the pair."""
        r = self.r
        out = []
        if self.chance(0.08):
            v = self.int_value(64)
            if self.chance(0.5):
                out.append("write_metadata:" + self.num(v, 64))
            else:
                m = self.int_mask(64) or 1
                out.append("write_metadata:%s/%s" % (self.num(v & m, 64),
                                                     self.num(m, 64)))
        if self.fset == "of13" and not out and self.table < 254 \
                and self.chance(0.1):
            out.append("goto_table:%d" % r.randint(self.table + 1, 254))
        return out

    def respell(self, action):
        """Another spelling ovs-ofctl reads as the same action: the name in
        any case, pop_vlan for strip_vlan, dec_ttl(), controller(max_len=N).
        """
        name, sep, arg = action.partition(":")
        if name.lower() == "strip_vlan" and self.chance(0.3):
            name = "pop_vlan"
        elif name.lower() == "dec_ttl" and self.chance(0.3):
            name += "()"
        elif (name.lower() == "controller" and sep and self.chance(0.3)):
            name, sep, arg = "%s(max_len=%s)" % (name, arg), "", ""
        if self.chance(0.15):
            head, paren, rest = name.partition("(")
            if self.chance(0.5):
                head = head.upper()
            else:
                head = "".join(c.upper() if self.chance(0.5) else c.lower()
                               for c in head)
            name = head + paren + rest
        return name + sep + arg

    @staticmethod
    def split_actions(acts):
        """The actions of a list, split at the commas outside
        parentheses (ct(commit,zone=1) is one)."""
        out, depth, start = [], 0, 0
        for i, c in enumerate(acts):
            depth += c == "(" and 1 or c == ")" and -1 or 0
            if c == "," and not depth:
                out.append(acts[start:i])
                start = i + 1
        out.append(acts[start:])
        return out

    def actions(self, cls):
        acts = self.plain_actions(cls)
        return ",".join(self.respell(a) for a in self.split_actions(acts)) \
            if acts else acts

    def plain_actions(self, cls, tail=True):
        k = self.r.random()
        if k < 0.04:
            return ""
        if k < 0.08:
            return self.pick(["drop", "drop", "DROP", "Drop"])
        if tail and k < 0.12:
            return self.conjunctions()
        self.vlans = 1 if self.vlan_present else 0
        self.ipany = CLASSES[cls][0] in (ETH_IP, ETH_IPV6)
        specific = (self.nxm_actions(cls) if self.fset == "nxm"
                    else self.of13_actions(cls))
        specific += self.pipeline_actions(cls)
        n = self.r.randint(1, 6)
        acts = []
        while len(acts) < n:
            if self.chance(0.4):
                a = self.common_action()
                if a is None:
                    continue
            else:
                a = self.pick(specific)()
                if a is None:
                    continue
            acts.append(a)
        if tail:
            acts += self.instructions()
        return ",".join(acts)

    # ---- whole flow -------------------------------------------------------

    def flow(self):
        cls = self.weighted(CLASS_WEIGHTS)
        items = self.match_items(cls) + self.meta_items()
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), items
        self.r.shuffle(items)
        parts = [text for _, text in items]
        # A field, shorthand or attribute given twice the same way, which
        # both tools accept ("tcp,tp_dst=80,tcp,tp_dst=80").
        # (Not tun_metadataN, which ovs-ofctl takes once: "set multiple
        # times".)
        twice = [p for p in parts if not p.startswith("tun_metadata")]
        if twice and self.chance(0.1):
            parts.insert(self.r.randint(0, len(parts)), self.pick(twice))
        parts.append("actions=" + self.actions(cls))
        line = ",".join(parts)
        if self.chance(0.05):
            line += self.pick([" # a comment", "#c", " #", " # x=1,y"])
        return line

    # ---- flows that are wrong, or right in a way flowdp is stricter about

    def bad_token(self, cls):
        """(keys it replaces, text, where, expectation) for one bad token of
        a flow of class CLS.  'where' is "match" or "actions"; expectation
        is "reject" (both tools reject), "accept" (both accept and print
        the same) or "stricter" (ovs-ofctl silently repairs the value, as
        wrapping 256.1.1.1 to 0.1.1.1; flowdp refuses it)."""
        dl_type, nw_proto, _ = CLASSES[cls]
        r = self.r
        ip = dl_type in (ETH_IP, ETH_IPV6)
        big = lambda nbytes: self.num(r.randint(1 << (8 * nbytes),
                                                (1 << (8 * nbytes + 4)) - 1),
                                      8 * nbytes + 4)
        c = []       # (keys, text, where, expectation)
        vlan = ("dl_vlan", "dl_vlan_pcp", "vlan_tci")

        def exact_or_bad(name, keys, value, nbytes, maxv):
            """name=value/mask on a field that takes no mask: with a mask
            other than all ones over the field's OpenFlow width (both
            reject), or with that mask (both accept, as no mask)."""
            full = (1 << (8 * nbytes)) - 1
            keys = keys if isinstance(keys, tuple) else (keys,)
            if self.chance(0.3):
                return (keys, "%s=%s/%s" % (name, self.num(value, maxv),
                                            self.num(full, 8 * nbytes)),
                        "match", "accept")
            m = self.pick([r.randint(1, full - 1), full >> 1, maxv,
                           full << 1, (full << 1) | 1, 0])
            if m == full:
                m = full >> 1
            # ovs-ofctl takes a zero mask as "any value", silently dropping
            # the field; flowdp refuses it.
            return (keys, "%s=%s/%s" % (name, self.num(value, maxv),
                                        self.num(m, 8 * nbytes + 1)),
                    "match", "stricter" if m == 0 else "reject")

        c.append((("in_port",), "in_port=" + self.pick(
            ["65536", "0x5", "0X10", str(r.randint(65536, 1 << 20))]),
            "match", "reject"))
        c.append((("in_port",), "in_port=%d/0xffff" % r.randint(1, 100),
                  "match", "reject"))
        c.append((("pkt_mark",), "pkt_mark=" + big(4), "match", "reject"))
        c.append((("dl_src",), "dl_src=" + self.pick(
            ["00:11:22:33:44:55:66", "0:1:2:3:4", "00:11:22:33:44:gg"]),
            "match", "reject"))
        c.append((vlan, "vlan_tci=" + big(2), "match", "reject"))
        c.append((vlan, "dl_vlan=" + big(2), "match", "reject"))
        c.append((vlan, "dl_vlan=%s" % self.num(r.randint(4096, 65534), 16),
                  "match", "stricter"))
        c.append((vlan, "dl_vlan_pcp=" + big(1), "match", "reject"))
        c.append((vlan, "dl_vlan_pcp=%d" % r.randint(8, 255), "match",
                  "stricter"))
        c.append(exact_or_bad("dl_vlan", vlan, r.randrange(4096), 2, 0xfff))
        c.append(exact_or_bad("dl_vlan_pcp", vlan, r.randrange(8), 1, 7))
        for name, n in (("priority", 2), ("idle_timeout", 2),
                        ("hard_timeout", 2)):
            c.append(((name,), "%s=%s" % (name, big(n)), "match", "reject"))
        c.append((("table",), "table=%d" % r.randint(256, 100000), "match",
                  "reject"))
        c.append((("cookie",), "cookie=0x1" + "0" * 16, "match", "reject"))
        c.append((("priority",), "priority=%d,priority=%d" % (
            r.randint(0, 100), r.randint(101, 200)), "match", "stricter"))
        c.append((("output",), "output:%s" % self.pick(
            ["65536", "0x5", str(r.randint(65536, 1 << 20))]), "actions",
            "reject"))
        c.append((("mod_vlan_vid",), "mod_vlan_vid:%d" % r.randint(
            4096, 70000), "actions", "reject"))
        c.append((("mod_vlan_pcp",), "mod_vlan_pcp:%d" % r.randint(8, 300),
                  "actions", "reject"))
        c.append((("controller",), "controller:%d" % r.randint(65536, 1e6),
                  "actions", "reject"))
        c.extend(self.bad_pipeline_tokens(cls, big))
        if cls == "any":
            c.append((("dl_type",), "dl_type=" + big(2), "match", "reject"))
            c.append(exact_or_bad("dl_type", "dl_type", 0x88cc, 2, 0xffff))
        if ip:
            for name in ("nw_tos", "nw_ecn", "nw_ttl"):
                c.append(((name,), "%s=%s" % (name, big(1)), "match",
                          "reject"))
                c.append(exact_or_bad(name, name, self.pick(
                    [0, 4, 8, 252]) if name == "nw_tos" else r.randrange(4),
                    1, 0xff))
            c.append((("nw_ecn",), "nw_ecn=%d" % r.randint(4, 255), "match",
                      "stricter"))
            c.append((("nw_tos",), "nw_tos=%d" % (r.randrange(64) * 4 +
                                                  r.randint(1, 3)),
                      "match", "stricter"))
            c.append((("mod_nw_tos",), "mod_nw_tos:%d" % r.randint(256, 999),
                      "actions", "reject"))
        if cls in ("ipx", "ipv6x"):
            c.append((("nw_proto",), "nw_proto=" + big(1), "match",
                      "reject"))
            c.append(exact_or_bad("nw_proto", "nw_proto", 47, 1, 0xff))
        if dl_type == ETH_IP:
            c.append((("nw_src",), "nw_src=%d.%d.%d.%d" % (
                r.randint(256, 999), r.randrange(256), r.randrange(256),
                r.randrange(256)), "match", "stricter"))
            c.append((("nw_dst",), "nw_dst=10.0.0.0/%d" % r.randint(33, 99),
                      "match", "reject"))
            c.append((("nw_dst",), "nw_dst=10.0.0.0/0x%x" % r.randint(1, 32),
                      "match", "reject"))
            c.append((("mod_nw_src",), "mod_nw_src:%s" % self.pick(
                ["256.1.1.1", "1.2.3", "010.1.2.3"]), "actions", "reject"))
        if dl_type == ETH_IPV6:
            c.append((("ipv6_label",), "ipv6_label=" + big(4), "match",
                      "reject"))
            c.append((("ipv6_src",), "ipv6_src=::1/%d" % r.randint(129, 999),
                      "match", "reject"))
        if nw_proto in (TCP, UDP, SCTP):
            for d in ("tp_src", "tp_dst"):
                c.append(((d,), "%s=%s" % (d, big(2)), "match", "reject"))
            c.append((("mod_tp_dst",), "mod_tp_dst:%s" % big(2), "actions",
                      "reject"))
        if nw_proto == TCP:
            c.append((("tcp_flags",), "tcp_flags=%s" % self.num(
                r.randint(0x1000, 0xffff), 16), "match", "reject"))
        if nw_proto in (ICMP, ICMP6):
            for name in ("icmp_type", "icmp_code"):
                c.append(((name,), "%s=%s" % (name, big(1)), "match",
                          "reject"))
                # An ND flow keeps its type and code 0 (its ND fields and
                # actions need them).
                v = (self.nd if name == "icmp_type" else 0) if self.nd \
                    else r.randrange(256)
                c.append(exact_or_bad(name, name, v, 1, 0xff))
        if nw_proto == ICMP6 and dl_type == ETH_IPV6:
            c.extend(self.bad_nd_tokens(big))
        if dl_type == ETH_ARP:
            c.append((("arp_op",), "arp_op=" + big(2), "match", "reject"))
            c.append((("arp_op",), "arp_op=%d" % r.randint(256, 65535),
                      "match", "stricter"))
            c.append(exact_or_bad("arp_op", "arp_op", r.randrange(256), 2,
                                  0xff))
        return self.pick(c)

    def bad_nd_tokens(self, big):
        """bad_token() candidates for neighbour discovery: each replaces
        icmp_type, icmp_code and every ND field of the flow.  ovs-ofctl
        drops an ND field whose prerequisites the match lacks (icmp_type
        not 135 or 136, icmp_code not 0, nd_sll in an advertisement,
        nd_tll in a solicitation); flowdp refuses it."""
        r = self.r
        keys = ("icmp_type", "icmp_code", "nd_target", "nd_sll", "nd_tll",
                "nd_reserved", "nd_options_type")
        mac = "00:11:22:33:44:%02x" % r.randrange(256)
        # bad_flow() keeps the flow's actions off the ND fields.
        t = self.pick([135, 136])
        c = [
            (keys, "icmp_type=%d,nd_reserved=%d/%s" % (
                t, r.randrange(100), self.num(self.pick([0xff, 0xffff0000,
                                                         1]), 32)),
             "match", "reject"),
            (keys, "icmp_type=%d,nd_reserved=%d/0xffffffff" % (
                t, r.randrange(100)), "match", "accept"),
            (keys, "icmp_type=%d,nd_options_type=%d" % (t, r.randint(256,
                                                                     999)),
             "match", "reject"),
            (keys, "icmp_type=%d,nd_options_type=1/0xf" % t, "match",
             "reject"),
            (keys, "icmp_type=%d,nd_target=::1/%d" % (t, r.randint(129, 999)),
             "match", "reject"),
            (keys, "icmp_type=%d,nd_reserved=%s" % (t, big(4)), "match",
             "reject"),
        ]
        return c + [
            (keys, "icmp_type=136,nd_sll=" + mac, "match", "stricter"),
            (keys, "icmp_type=135,nd_tll=" + mac, "match", "stricter"),
            (keys, "icmp_type=%d,nd_target=fe80::1" % self.pick([0, 128, 134,
                                                                 137]),
             "match", "stricter"),
            (keys, "icmp_type=135,icmp_code=%d,nd_target=::1" % r.randint(
                1, 255), "match", "stricter"),
            (keys, "nd_target=fe80::2", "match", "stricter"),
        ]

    def bad_pipeline_tokens(self, cls, big):
        """bad_token() candidates for the pipeline's fields and actions."""
        dl_type, _, _ = CLASSES[cls]
        r = self.r
        reg = "reg%d" % r.randrange(16)
        c = [(("conj_id",), "conj_id=%d/%s" % (r.randrange(100), self.num(
            self.pick([0xff, 0xffff, 0x7fffffff, 1]), 32)), "match",
              "reject"),
             (("conj_id",), "conj_id=%d/0xffffffff" % r.randrange(100),
              "match", "accept"),
             (("conj_id",), "conj_id=" + big(4), "match", "reject"),
             ((reg,), "%s=%s" % (reg, big(4)), "match", "reject"),
             ((reg,), "%s=1/%s" % (reg, big(4)), "match", "reject"),
             (("metadata",), "metadata=" + big(8), "match", "reject"),
             (("reg0",), "xreg0=" + big(8), "match", "reject"),
             (("reg0",), "xxreg0=0x1" + "0" * 32, "match", "reject"),
             (("reg4",), "xxreg1=1/0x1" + "0" * 32, "match", "reject"),
             (("load",), "load:0x%x->NXM_NX_XXREG%d[0..%d]" % (
                 r.randint(1 << 70, 1 << 100), r.randrange(4),
                 r.randint(0, 63)), "actions", "reject"),
             (("load",), "load:1->NXM_NX_XXREG%d[0..%d]" % (
                 r.randrange(4), r.randint(128, 200)), "actions", "reject"),
             (("move",), "move:NXM_NX_XXREG0[]->NXM_NX_XXREG1[0..%d]" % (
                 r.randint(0, 126)), "actions", "reject"),
             (("load",), "load:%d->NXM_NX_REG%d[0..%d]" % (
                 r.randint(256, 65535), r.randrange(16), r.randint(0, 7)),
              "actions", "reject"),
             (("load",), "load:1->NXM_NX_REG%d[0..%d]" % (
                 r.randrange(16), r.randint(32, 70)), "actions", "reject"),
             (("load",), "load:1->NXM_NX_REG1[9..3]", "actions", "reject"),
             (("load",), "load:1->NXM_NX_XREG0[]", "actions", "reject"),
             (("load",), "load:1->" + self.pick(["NXM_OF_ETH_TYPE[]",
                                                 "NXM_OF_ETH_TYPE[0..3]"]),
              "actions", "reject"),
             (("move",), "move:NXM_NX_REG0[0..%d]->NXM_NX_REG1[0..%d]" % (
                 r.randint(0, 15), r.randint(16, 31)), "actions", "reject"),
             (("resubmit",), self.pick(["resubmit(in_port)", "resubmit()",
                                        "resubmit(,)", "resubmit:in_port",
                                        "resubmit(,0x10)",
                                        "resubmit(70000,1)"]),
              "actions", "reject"),
             (("conjunction",), self.pick(["conjunction(1,1/1)",
                                           "conjunction(1,0/2)",
                                           "conjunction(1,3/2)",
                                           "conjunction(1,1/65)",
                                           "conjunction(1,0x1/2)"]),
              "actions", "reject"),
             (("conjunction",), "output:1,conjunction(%d,1/2)" % r.randrange(
                 9), "actions", "reject"),
             (("conjunction",), "conjunction(%d,1/2)" % r.randint(
                 1 << 32, 1 << 40), "actions", "stricter"),
             (("write_metadata",), "write_metadata:1,write_metadata:2",
              "actions", "reject"),
             (("write_metadata",), "write_metadata:1,output:1", "actions",
              "reject"),
             (("write_metadata",), "write_metadata:0x15/0xf", "actions",
              "stricter"),
             (("write_metadata",), "write_metadata:0x5/0", "actions",
              "stricter"),
             (("goto_table",), "goto_table:%d,output:1" % r.randint(1, 254),
              "actions", "reject"),
             ]
        c.extend(self.bad_ct_tokens(dl_type, big))
        c.extend(self.bad_ct_action_tokens(cls))
        c.extend(self.bad_learn_tokens())
        if dl_type != ETH_IPV6:
            c.append((("move",), "move:NXM_NX_IPV6_SRC[0..31]->NXM_NX_REG0[]",
                      "actions", "reject"))
        if dl_type != ETH_IP:
            c.append((("load",), "load:1->NXM_OF_IP_SRC[0]", "actions",
                      "reject"))
        if self.fset == "of13":
            c.append((("goto_table",), "goto_table:0", "actions", "reject"))
            c.append((("goto_table",), "goto_table:255", "actions",
                      "stricter"))
        return c

    def bad_ct_tokens(self, dl_type, big):
        """bad_token() candidates for the connection-tracking fields.  A
        token that names ct_state replaces the tuple fields too, whose
        prerequisite it is."""
        r = self.r
        state = ("ct_state",) + CT_TUPLE_KEYS
        c = [(("ct_zone",), "ct_zone=%d" % r.randint(65536, 1 << 20),
              "match", "reject"),
             (("ct_zone",), "ct_zone=%d/%s" % (r.randrange(100), self.num(
                 self.pick([0xff, 0x7fff, 1, 0xfffff]), 16)), "match",
              "reject"),
             (("ct_mark",), "ct_mark=" + big(4), "match", "reject"),
             (("ct_label",), "ct_label=0x1" + "0" * 32, "match", "reject"),
             (("ct_label",), "ct_label=%d" % r.randint(1 << 64, 1 << 70),
              "match", "reject"),
             (state, "ct_state=" + self.pick(
                 ["0x100", "0x1/0x1ff", "+trk+trk", "+new-new", "+foo",
                  "+NEW", "+new/0x1", "trk+new", "+"]), "match", "reject"),
             # ovs-ofctl takes these and drops the field without a word.
             (state, "ct_state=+est,ct_nw_proto=0", "match", "stricter"),
             (state, "ct_state=+est,ct_tp_%s=%d" % (
                 self.pick(["src", "dst"]), r.randint(1, 65535)), "match",
              "stricter"),
             # No tracked connection: ovs-ofctl cannot decode it back.
             (state, "ct_state=%s,ct_nw_proto=6" % self.pick(
                 ["+trk", "-new", "+trk+inv", "-trk"]), "match", "reject"),
             (("set_field",), "set_field:%d->%s" % (
                 r.randrange(100), self.pick(["ct_mark", "ct_label"])),
              "actions", "reject"),
             (("load",), "load:1->%s" % self.pick(
                 ["NXM_NX_CT_MARK[]", "NXM_NX_CT_LABEL[0..3]",
                  "NXM_NX_CT_ZONE[]"]), "actions", "reject"),
             (("move",), "move:NXM_NX_REG0[0..15]->NXM_NX_CT_%s[0..15]" %
              self.pick(["MARK", "LABEL"]), "actions", "reject"),
             (("set_field",), "set_field:1->%s" % self.pick(
                 ["ct_state", "ct_zone", "ct_nw_proto"]), "actions",
              "reject"),
             ]
        if dl_type != ETH_IP:
            c.append((state, "ct_state=+est,ct_nw_src=10.0.0.1", "match",
                      "reject"))
        if dl_type != ETH_IPV6:
            c.append((state, "ct_state=+est,ct_ipv6_dst=::1", "match",
                      "reject"))
        return c

    def bad_learn_tokens(self):
        """bad_token() candidates for learn and fin_timeout."""
        r = self.r
        learn = ("learn",)
        return [
            (learn, "learn(table=255)", "actions", "reject"),
            (learn, "learn(%s=1)" % self.pick(["foo", "tables", "fin"]),
             "actions", "reject"),
            (learn, "learn(result_dst=NXM_NX_REG%d[0..1])" % r.randrange(16),
             "actions", "reject"),
            (learn, "learn(result_dst=NXM_OF_ETH_TYPE[0])", "actions",
             "reject"),
            (learn, "learn(NXM_NX_REG0[0..3]=0x%x)" % r.randint(16, 255),
             "actions", "reject"),
            (learn, "learn(NXM_OF_ETH_DST[]=NXM_NX_REG0[])", "actions",
             "reject"),
            (learn, "learn(ip_src=1.2.3.4)", "actions", "reject"),
            (learn, "learn(load:5->NXM_OF_IP_DST[])", "actions", "reject"),
            (learn, "learn(load:NXM_NX_REG0[]->NXM_OF_ETH_TYPE[])",
             "actions", "reject"),
            (learn, "learn(load:0x1ff->NXM_NX_REG0[0..7])", "actions",
             "reject"),
            (learn, "learn(output:NXM_NX_REG0[0..40])", "actions", "reject"),
            (learn, "learn(NXM_NX_REG0[5..3])", "actions", "reject"),
            (learn, "fin_timeout(%s=1)" % self.pick(["idle", "foo"]),
             "actions", "reject"),
            # ovs-ofctl reads these with atoi(): "x" is 0 and -1 wraps.
            (learn, "learn(%s=%s)" % (
                self.pick(["priority", "idle_timeout", "hard_timeout",
                           "limit"]), self.pick(["x", "-1", "1x"])),
             "actions", "stricter"),
        ]

    def bad_ct_action_tokens(self, cls):
        """bad_token() candidates for ct and ct_clear."""
        dl_type, nw_proto, _ = CLASSES[cls]
        r = self.r
        # The flow's ct_state goes (ct(commit) under +inv is another
        # error), and with it the fields that need it.
        ct = ("ct", "ct_state") + CT_TUPLE_KEYS
        if dl_type not in (ETH_IP, ETH_IPV6):
            return [(ct, self.pick(["ct", "ct(commit)", "ct(table=1)"]),
                     "actions", "reject")]
        v6 = dl_type == ETH_IPV6
        addr = "fe80::1" if v6 else "10.0.0.1"
        other = "10.0.0.1" if v6 else "[fe80::1]"
        c = [(ct, "ct(force)", "actions", "reject"),
             (ct, "ct(commit,exec(%s))" % self.pick(
                 ["output:1", "set_field:1->reg0", "load:1->NXM_NX_REG0[]",
                  "move:NXM_NX_CT_MARK[]->NXM_NX_REG0[]"]),
              "actions", "reject"),
             (ct, "ct(exec(set_field:0x1/0x1->ct_mark))", "actions",
              "reject"),
             (ct, "ct(nat(src=%s))" % addr, "actions", "reject"),
             (ct, "ct(commit,nat(src=%s,dst=%s))" % (addr, addr), "actions",
              "reject"),
             (ct, "ct(commit,nat(dst=%s,hash,random))" % addr, "actions",
              "reject"),
             (ct, "ct(commit,nat(src=%s))" % other, "actions", "reject"),
             (ct, "ct(commit,nat(persistent))", "actions", "reject"),
             (ct, "ct(commit,nat(foo))", "actions", "reject"),
             (ct, "ct(commit,nat(src=%s-%s))" % (
                 "10.0.0.5" if not v6 else "[fe80::5]",
                 "10.0.0.1" if not v6 else "[fe80::1]"), "actions", "reject"),
             (ct, "ct(commit,nat(dst=%s:%d-%d))" % (
                 "10.0.0.1" if not v6 else "[fe80::1]", r.randint(101, 200),
                 r.randint(1, 100)), "actions", "reject"),
             (ct, "ct(table=%s)" % self.pick(["255", "0x10", "-1", ""]),
              "actions", "reject"),
             (ct, "ct(%s)" % self.pick(["bogus", "COMMIT", "zone",
                                        "zone=70000"]),
              "actions", "reject"),
             (ct, "ct(zone=NXM_NX_REG%d[0..%d])" % (
                 r.randrange(16), self.pick([7, 14, 16, 31])), "actions",
              "reject"),
             (ct, "ct(commit,exec(set_field:%s->ct_mark))" % self.num(
                 r.randint(1 << 32, 1 << 40), 40), "actions", "reject"),
             # ovs-ofctl keeps the last of a repeated key, drops flags
             # without an address and a zero port, and prints a nat after
             # exec() inside it; flowdp refuses each.
             (ct, "ct(commit,zone=1,zone=2)", "actions", "stricter"),
             (ct, "ct(table=1,table=2)", "actions", "stricter"),
             (ct, "ct(commit,nat(src,random))", "actions", "stricter"),
             (ct, "ct(commit,nat(src=%s:0))" % ("[fe80::1]" if v6
                                                else "10.0.0.1"),
              "actions", "stricter"),
             (ct, "ct(commit,nat,nat)", "actions", "stricter"),
             (("ct_clear",), "ct_clear(1)", "actions", "stricter"),
             ]
        if nw_proto == TCP:
            c.append((ct, "ct(commit,alg=ftp)", "actions", "stricter"))
        elif nw_proto == UDP:
            c.append((ct, "ct(commit,alg=tftp)", "actions", "stricter"))
        else:
            c.append((ct, "ct(commit,alg=ftp)", "actions", "reject"))
        return c

    def bad_flow(self):
        """(line, expectation): a flow with one token from bad_token()."""
        cls = self.weighted(CLASS_WEIGHTS)
        keys, text, where, expect = self.bad_token(cls)
        items = [(k, t) for k, t in self.match_items(cls) + self.meta_items()
                 if k not in keys]
        if "icmp_type" in keys or "icmp_code" in keys:
            # The token replaces the type or code an ND match rests on:
            # no ND field in the match nor in the actions then.
            items = [(k, t) for k, t in items if not k.startswith("nd_")]
            self.nd = None
        if any(k in ("dl_vlan", "dl_vlan_pcp", "vlan_tci") for k in keys):
            # Every VLAN token that ovs-ofctl accepts here matches a tag.
            self.vlan_present = True
        if "ip_frag" in keys:
            self.frag_later = False
        acts = self.plain_actions(cls, tail=False)
        if where == "match":
            items.insert(self.r.randint(0, len(items)), (keys[0], text))
        elif text.startswith("conjunction(") and expect != "reject":
            acts = text             # conjunctions stand alone
        else:
            acts = ",".join(a for a in (acts, text)
                            if a and a.lower() != "drop")
        self.r.shuffle(items)
        parts = [t for _, t in items] + ["actions=" + acts]
        return ",".join(parts), expect


def flows(seed, count, fset):
    """The COUNT flows of set FSET ("nxm" or "of13") for SEED, as a list."""
    # Seed from (seed, set) so that the two sets differ for the same seed.
    gen = Gen(random.Random("flowgen:%d:%s" % (seed, fset)), fset)
    return [gen.flow() for _ in range(count)]


def bad_flows(seed, count, fset):
    """COUNT (line, expectation) pairs for SEED and FSET: see bad_token()."""
    gen = Gen(random.Random("flowgen-bad:%d:%s" % (seed, fset)), fset)
    return [gen.bad_flow() for _ in range(count)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--set", choices=["nxm", "of13"], default="nxm")
    args = ap.parse_args()
    sys.stdout.write("".join(f + "\n" for f in flows(args.seed, args.count,
                                                       args.set)))


if __name__ == "__main__":
    main()
