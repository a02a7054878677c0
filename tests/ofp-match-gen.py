#!/usr/bin/env python3
"""Byte-exact match vectors for tests/unit/test-ofp-match.c, from ovs-ofctl.

    ofp-match-gen.py --flowdp-ctl PATH [--out tests/ofp-match.vectors]

For a set of flows (the matches of tests/every-action.flows, flowgen.py's
two sets and hand-picked edge cases), asks Open vSwitch's ovs-ofctl, the
oracle, how it encodes each match, and writes one line per (flow, format):

    FORMAT<TAB>FLOW<TAB>HEX<TAB>DECODED

FORMAT is "nxm" (the nx_match of an NXT_FLOW_MOD, without its padding),
"oxm13" and "oxm15" (the OpenFlow 1.3 and 1.5 struct ofp_match, OFPMT_OXM
header and padding included) or "of10" (OpenFlow 1.0's 40-byte
ofp_match).  FLOW is "MATCH,actions=drop", as both programs parse it.  A
flow goes in only if flowdp's parser accepts it (flowdp-ctl parse-flows)
and ovs-ofctl can encode it in that format (OpenFlow 1.0 cannot say
registers, for one).  Flows with tun_metadata fields are left out: without
a switch's TLV map ovs-ofctl lays them out per flow, which flowdp's codec
does not (tests/unit/test-ofp-match.c tests them with a map).

DECODED is what Open vSwitch makes of those bytes (ovs-ofctl ofp-print
of the flow mod, which decodes as ovs-vswitchd does): "ok:" and the match
it prints (without table, priority and cookie), or "err:" and the error
(ovs-ofctl writes some matches it cannot read back: a vlan_tci without
the CFI bit in OXM is a VLAN_PCP without OFPVID_PRESENT).

ovs-ofctl parse-flow with -mmmmm prints the flow mod it would send as a
hex dump; the match is at a fixed offset of each flow mod (48 for
NXT_FLOW_MOD, whose match_len is at 40, and for OpenFlow 1.3 and 1.5's
OFPT_FLOW_MOD; 8 for OpenFlow 1.0's).

The unit test reads the committed output and needs no ovs-ofctl; run this
again (with a built flowdp-ctl) when the flows or Open vSwitch change.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Edge cases: VLAN forms, fragments, tunnel and connection-tracking
# fields, registers, ND and ARP, masks on every maskable kind.
EDGE = [
    "",
    "in_port=1",
    "in_port=65533",
    "in_port=LOCAL",
    "in_port=CONTROLLER",
    "dl_src=00:11:22:33:44:55",
    "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00",
    "dl_src=aa:bb:cc:00:00:00/ff:ff:ff:00:00:00,dl_dst=00:00:00:00:00:01",
    "dl_type=0x1234",
    "vlan_tci=0",
    "vlan_tci=0x1005",
    "vlan_tci=0x1005/0x1fff",
    "vlan_tci=0x1000/0x1000",
    "vlan_tci=0/0x1000",
    "vlan_tci=0x3000/0xf000",
    "vlan_tci=0x0005/0x0fff",
    "vlan_tci=0xf123",
    "dl_vlan=5",
    "dl_vlan=0xffff",
    "dl_vlan_pcp=3",
    "dl_vlan=7,dl_vlan_pcp=2",
    "ip",
    "ipv6",
    "arp",
    "rarp",
    "ip,nw_src=10.0.0.1",
    "ip,nw_src=10.0.0.0/8,nw_dst=192.168.1.0/24",
    "ip,nw_dst=10.1.0.0/255.255.0.0",
    "ip,nw_src=10.0.0.1/255.0.255.0",
    "ip,nw_tos=4",
    "ip,nw_tos=252",
    "ip,nw_ecn=1",
    "ip,nw_tos=8,nw_ecn=3",
    "ip,nw_ttl=64",
    "ip,ip_frag=no",
    "ip,ip_frag=yes",
    "ip,ip_frag=first",
    "ip,ip_frag=later",
    "ip,ip_frag=not_later",
    "ipv6,ip_frag=first",
    "tcp",
    "tcp,tp_src=80",
    "tcp,tp_dst=0x1000/0xf000",
    "tcp,tcp_flags=+syn-ack",
    "tcp,tcp_flags=0x012",
    "tcp,tcp_flags=+fin",
    "udp,tp_src=53,tp_dst=1024/0xfc00",
    "sctp,tp_src=1,tp_dst=2",
    "icmp,icmp_type=3,icmp_code=1",
    "icmp,icmp_type=8",
    "tcp6,ipv6_src=2001:db8::1,tp_dst=443",
    "udp6,ipv6_dst=2001:db8::/32,tp_src=546",
    "ipv6,ipv6_label=0x12345",
    "ipv6,ipv6_label=5/0xf",
    "ipv6,ipv6_src=::1/::ffff",
    "icmp6,icmp_type=128",
    "icmp6,icmp_type=135,nd_target=fe80::1",
    "icmp6,icmp_type=135,nd_target=fe80::/10,nd_sll=00:11:22:33:44:55",
    "icmp6,icmp_type=136,nd_tll=00:11:22:33:44:66",
    "icmp6,icmp_type=136,icmp_code=0,nd_target=2001:db8::5,"
    "nd_tll=00:00:00:00:00:01/00:00:00:00:00:ff",
    "icmp6,icmp_type=135,nd_reserved=5",
    "icmp6,icmp_type=136,nd_options_type=2",
    "arp,arp_op=1",
    "arp,arp_op=2,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/8",
    "arp,arp_sha=00:11:22:33:44:55,arp_tha=ff:ff:ff:ff:ff:ff",
    "arp,arp_sha=00:11:22:00:00:00/ff:ff:ff:00:00:00",
    "rarp,arp_op=3",
    "tun_id=5",
    "tun_id=0x5/0xff",
    "tun_src=1.2.3.4",
    "tun_dst=10.0.0.0/8",
    "tun_src=1.2.3.4,tun_dst=5.6.7.8,tun_id=1",
    "tun_ipv6_src=2001:db8::1",
    "tun_ipv6_dst=2001:db8::/64",
    "tun_flags=+oam",
    "tun_flags=-oam",
    "tun_gbp_id=5",
    "tun_gbp_id=0x100/0xff00",
    "tun_gbp_flags=1",
    "reg0=5",
    "reg1=0x10/0xf0",
    "reg15=0xffffffff",
    "reg3=1,reg4=2,reg7=0x80000000/0x80000000",
    "xreg0=0x123456789",
    "xreg3=5/0xff",
    "xxreg1=0x1",
    "xxreg0=0x100000000000000000000000000/0xff00000000000000000000000000",
    "metadata=0x1234",
    "metadata=0x5/0xf",
    "pkt_mark=0x10",
    "pkt_mark=0x1/0xf",
    "ct_state=+trk",
    "ct_state=+trk+est-inv",
    "ct_state=-trk",
    "ct_state=0x22",
    "ct_zone=5",
    "ct_mark=1",
    "ct_mark=0x10/0xf0",
    "ct_label=0x1",
    "ct_label=0x1000000000000/0xffff000000000000",
    "ip,ct_state=+trk+new,ct_nw_src=10.0.0.1",
    "ip,ct_state=+trk+est,ct_nw_dst=10.0.0.0/8",
    "ipv6,ct_state=+trk+est,ct_ipv6_src=2001:db8::1",
    "ipv6,ct_state=+trk+new,ct_ipv6_dst=2001:db8::/32",
    "ip,ct_state=+trk+new,ct_nw_proto=6,ct_tp_src=80,ct_tp_dst=0x100/0xff00",
    "ip,ct_state=+trk+est,ct_nw_proto=17",
    "conj_id=5",
    "in_port=2,tcp,nw_src=10.0.0.0/24,tp_dst=80,reg0=1,ct_state=+trk+est",
    "in_port=5,dl_vlan=10,udp,nw_dst=224.0.0.0/4,tp_dst=5000,metadata=1,"
    "tun_id=7,ct_zone=3",
]

FORMATS = {
    # name: (ovs-ofctl options, the match's offset in the flow mod)
    "nxm": (["-F", "nxm", "-O", "OpenFlow10"], 48),
    "oxm13": (["-O", "OpenFlow13"], 48),
    "oxm15": (["-O", "OpenFlow15"], 48),
    "of10": (["-F", "openflow10", "-O", "OpenFlow10"], 8),
}


def match_of(line):
    """The match part of a flow line, or None for blank lines/comments."""
    line = line.split("#", 1)[0].strip()
    if not line:
        return None
    m = re.search(r"(^|,)\s*actions\s*=", line)
    if m:
        line = line[: m.start()]
    return line.strip().rstrip(",")


def flowdp_accepts(ctl, flow):
    with tempfile.NamedTemporaryFile("w", suffix=".flows") as f:
        f.write(flow + "\n")
        f.flush()
        r = subprocess.run([ctl, "parse-flows", f.name],
                           capture_output=True, text=True)
        return r.returncode == 0


def hexdump_bytes(text):
    """The bytes of an ovs-ofctl hex dump (lines "OFFSET  xx xx ...")."""
    out = bytearray()
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]{8})  (.*?)\s*\|", line)
        if not m:
            continue
        for tok in m.group(2).replace("-", " ").split():
            out.append(int(tok, 16))
    return bytes(out)


def ofctl_decode(msg):
    """Open vSwitch's reading of flow mod 'msg': "ok:MATCH" or "err:NAME"."""
    r = subprocess.run(["ovs-ofctl", "ofp-print", msg.hex()],
                       capture_output=True, text=True)
    first = r.stdout.splitlines()[0] if r.stdout else ""
    m = re.search(r"\*\*\*decode error: (\w+)\*\*\*", first)
    if m:
        return "err:" + m.group(1)
    m = re.search(r": ADD (.*?) ?actions=", first)
    if not m:
        return "err:?"
    text = m.group(1)
    text = re.sub(r"^table:\S+ ", "", text)
    text = re.sub(r" ?cookie:\S+", "", text)
    text = re.sub(r"(^| )(idle|hard|importance):\S+", "", text)
    text = re.sub(r" (send_flow_rem|check_overlap|reset_counts"
                  r"|no_packet_counts|no_byte_counts)", "", text)
    text = re.sub(r"^priority=\d+,?", "", text)
    return "ok:" + text.strip()


def ofctl_match(fmt, flow):
    """(match bytes, Open vSwitch's decoding of them), or None."""
    opts, offset = FORMATS[fmt]
    r = subprocess.run(["ovs-ofctl", "-mmmmm"] + opts + ["parse-flow", flow],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    msg = hexdump_bytes(r.stdout)
    if len(msg) < offset:
        return None
    return ofctl_match_bytes(fmt, msg, offset), ofctl_decode(msg)


def ofctl_match_bytes(fmt, msg, offset):
    if fmt == "nxm":
        if msg[1] != 4:             # OFPT_VENDOR: an NXT_FLOW_MOD
            return None
        match_len = msg[40] << 8 | msg[41]
        return msg[offset: offset + match_len]
    if fmt == "of10":
        if msg[1] != 14:            # OFPT_FLOW_MOD
            return None
        return msg[offset: offset + 40]
    if msg[1] != 14:
        return None
    length = msg[offset + 2] << 8 | msg[offset + 3]
    return msg[offset: offset + (length + 7) // 8 * 8]


def flows(ctl):
    seen = set()
    out = []

    def add(match):
        if match is None or match in seen or "tun_metadata" in match:
            return
        seen.add(match)
        flow = (match + "," if match else "") + "actions=drop"
        if flowdp_accepts(ctl, flow):
            out.append(flow)

    for m in EDGE:
        add(m)
    with open(os.path.join(HERE, "every-action.flows")) as f:
        for line in f:
            add(match_of(line))
    for s, seed in (("nxm", 11), ("of13", 12)):
        r = subprocess.run([sys.executable, os.path.join(HERE, "flowgen.py"),
                            "--seed", str(seed), "--count", "150",
                            "--set", s],
                           capture_output=True, text=True, check=True)
        for line in r.stdout.splitlines():
            add(match_of(line))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flowdp-ctl", required=True)
    ap.add_argument("--out", default=os.path.join(HERE, "ofp-match.vectors"))
    args = ap.parse_args()

    lines = []
    for flow in flows(args.flowdp_ctl):
        for fmt in FORMATS:
            r = ofctl_match(fmt, flow)
            if r is not None and r[0] is not None:
                lines.append("%s\t%s\t%s\t%s" % (fmt, flow, r[0].hex(),
                                                  r[1]))
    with open(args.out, "w") as f:
        f.write("# Generated by tests/ofp-match-gen.py from %s: FORMAT, "
                "FLOW, HEX, DECODED (see there).\n"
                % subprocess.run(["ovs-ofctl", "--version"],
                                 capture_output=True,
                                 text=True).stdout.splitlines()[0])
        for line in lines:
            f.write(line + "\n")
    print("%s: %d vectors" % (args.out, len(lines)))


if __name__ == "__main__":
    main()
