#!/usr/bin/env python3
"""One scripted ovs-ofctl session against two OpenFlow switches, compared.

    ofctl-diff.py --ref TARGET --test TARGET [--seeds "1 2"] [--dir DIR]
                  [--versions OpenFlow10,OpenFlow13,...] [--ref-pcap FILE
                  --test-pcap FILE] [--quiet]
    ofctl-diff.py --pcaps-only --ref-pcap FILE --test-pcap FILE

runs the same sequence of ovs-ofctl commands (session() below; each B()
is one step) against the reference switch (REF: an
ovs-vswitchd with the dummy datapath, started by tests/ovs-peer.sh) and
the switch under test (TEST: flowdpd), once per OpenFlow version, and
compares what ovs-ofctl printed and its exit status.  TARGET is what
ovs-ofctl takes as its switch ("unix:PATH" of the switch's management
socket).  Both switches must have ports 1, 2 and 3 with the same names;
with --ref-pcap/--test-pcap the packets each one sent on port 2 (its
capture file) are compared at the end too.

What it compares and why they may differ:

  * ovs-ofctl itself decodes both switches' replies and prints them, so
    any difference in what it prints is a difference in what the switches
    said on the wire (a field, a flag, a counter, an error code, the bytes
    an error echoes), or in what they did (the flows left behind).
  * A few things legitimately differ between two switches; normalise()
    rewrites exactly those, each with its reason.  Nothing else is
    touched: a normalisation must never hide a real difference.
  * The order of flows in a plain dump is the switch's classifier order,
    which OpenFlow leaves unspecified: such dumps are compared as sorted
    lines (order "any").  Sorted dumps (--sort, --rsort) are compared in
    order, except that flows that tie on the sort key may come in either
    order (order "ties": ovs-ofctl leaves ties to qsort()).

The flows: a realistic mix per version -- an Antrea-like program (per-pod
classifier, spoof guard, conntrack zones, service groups with
learn()-based session affinity, conjunctive network policies with ct
commit, L3 and L2 forwarding, a metered flow) and an OVN-like one
(logical datapaths in metadata, logical ports in reg14/reg15, resubmit
chains, ct with a zone from a register, controller() with userdata,
move/push/pop, notes) -- from a seeded generator, plus
tests/every-action.flows and tests/flowgen.py's random flows, each of
those added on its own so that a flow the reference refuses must be
refused by the switch under test with the same error.  Seeds: --seeds
(default "1"); OFCTL_DIFF_SEEDS in the environment adds more.

On a difference it prints the step, then a unified diff (- reference,
+ under test) of the normalised outputs; exit status 1.  Every run keeps
the raw outputs in DIR (default ofctl-diff.d) for a failure's report.
"""

import argparse
import difflib
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import flowgen  # noqa: E402  (tests/flowgen.py, beside this file)

VERSIONS = ["OpenFlow10", "OpenFlow13", "OpenFlow14", "OpenFlow15"]
WIRE_VERSION = {"OpenFlow10": 1, "OpenFlow13": 4, "OpenFlow14": 5,
                "OpenFlow15": 6}

# ---------------------------------------------------------------------------
# Normalisation: what two correct switches may print differently.

# Each entry: (regex, replacement, why).  Applied to both sides' stdout and
# stderr alike.
NORMALISATIONS = [
    # Flows, ports, groups and meters are created at different moments on
    # the two switches, and the commands reach them at different moments:
    # how long each has existed is not comparable.  (Every duration in
    # ovs-ofctl's output: flows, ports, groups, meters, in seconds.)
    (re.compile(r"duration=[0-9.]+s"), "duration=Xs",
     "creation times differ"),
    (re.compile(r"duration:[0-9.]+s"), "duration:Xs",
     "creation times differ"),
    # idle_age and hard_age are seconds since the flow was last hit or
    # changed, rounded: the same flow may be 0 s old on one switch and 1 s
    # on the other, a step later.
    (re.compile(r"(idle|hard)_age=[0-9]+, "), "",
     "ages depend on when the command ran"),
    # The datapath id is each switch's own (Open vSwitch derives it from
    # the LOCAL port's random MAC).
    (re.compile(r"dpid:[0-9a-f]{16}"), "dpid:X", "each switch has its own"),
    # ovs-ofctl's log lines (a warning about a reply it could not decode)
    # start with the time it logged them.
    (re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\|[0-9]+\|", re.M),
     "TIME|N|", "when ovs-ofctl logged"),
    # The LOCAL port's MAC is random in Open vSwitch (and each switch's
    # own); ports 1-3 of the dummy datapath take aa:55:aa:55:00:NN in the
    # order Open vSwitch created them and cannot be given another, while
    # a flowdpd port's address is its back end's.  Only the address on a
    # port description line is rewritten, nothing else on it.
    (re.compile(r"^( +(?:[0-9]+|LOCAL)\([^)]*\)): addr:[0-9a-f:]{17}$", re.M),
     r"\1: addr:X", "port MACs are each switch's"),
    # The LOCAL port is Open vSwitch's bridge interface, named after the
    # bridge and up; flowdpd has no interface behind LOCAL and says so
    # (config PORT_DOWN, state LINK_DOWN).  Its name and those two lines
    # are rewritten, nothing else of its block.
    (re.compile(r"^( +LOCAL)\([^)]*\)(: addr:.*)\n( +config: +).*\n"
                r"( +state: +).*$", re.M),
     r"\1(X)\2\n\3X\n\4X", "LOCAL is the bridge's own interface"),
    # The tunnel metadata space is a capacity of each switch's flow key:
    # Open vSwitch's is 256 bytes, flowdp's 32 (include/flowdp/key.h).
    # Both report their own in the TLV table reply; the mappings printed
    # below that line are compared as they are.
    (re.compile(r"max option space=[0-9]+ "), "max option space=X ",
     "each switch's key has its own tunnel metadata space"),
]

# Port counters Open vSwitch's dummy ports do not keep (it prints "?" for
# the all-ones "unavailable" value); flowdpd may keep them.  Rewritten to
# "?" on both sides: the dummy datapath has nothing to compare them with.
PORT_UNKEPT = re.compile(r"\b(drop|errs|frame|over|crc|coll)=[0-9?]+")


# OpenFlow 1.4+ port statistics may carry a port's custom counters
# (OFPPSPT14_EXPERIMENTER / Open vSwitch's "CUSTOM Statistics"): the
# dummy datapath invents its own (rx_custom_packets_1, rx_q0_bytes...),
# which name nothing a flowdpd port has.  The block (its title and its
# indented "name=value," lines) is left out on both sides.
PORT_CUSTOM = re.compile(r"^ +CUSTOM Statistics\n(?: {20,}[a-z0-9_]+=.*\n)*",
                         re.M)


def normalise(text, ports=False):
    for rx, rep, _ in NORMALISATIONS:
        text = rx.sub(rep, text)
    if ports:
        text = PORT_UNKEPT.sub(r"\1=?", text)
        text = PORT_CUSTOM.sub("", text)
    return text


PRIORITY = re.compile(r"\bpriority=([0-9]+)")


def sort_key_lines(text, field):
    """The flow lines of a sorted dump and each one's sort key (the value of
    'field' as printed, "" where absent), for comparing with ties."""
    out = []
    for line in text.splitlines():
        m = re.search(r"\b%s=([^, ]+)" % re.escape(field), line)
        if field == "priority" and not m and "actions=" in line:
            out.append(("32768", line))
        else:
            out.append((m.group(1) if m else "", line))
    return out


def same_with_ties(a, b, field):
    """True if dumps 'a' and 'b' (normalised) hold the same lines and the
    same sequence of sort keys: only flows that tie may be swapped."""
    ka, kb = sort_key_lines(a, field), sort_key_lines(b, field)
    return ([k for k, _ in ka] == [k for k, _ in kb]
            and sorted(ka) == sorted(kb))


# ---------------------------------------------------------------------------
# Running ovs-ofctl on both sides.

class Session:
    def __init__(self, args):
        self.args = args
        self.ref = args.ref
        self.test = args.test
        self.dir = args.dir
        self.failures = []
        self.steps = 0
        self.n = 0
        os.makedirs(self.dir, exist_ok=True)

    def start(self, target, version, argv):
        cmd = ["ovs-ofctl"] + (["-O", version] if version else []) + \
              [a.replace("@T", target) for a in argv]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    @staticmethod
    def finish(p, target, timeout=30):
        """(exit status, stdout, stderr) of 'p', with the switch's own
        name ('target', in an error's "talking to unix:PATH") written as
        @T: each switch has its own socket."""
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            rc, err = "timeout", err + "timed out after %d s\n" % timeout
        return rc, out.replace(target, "@T"), err.replace(target, "@T")

    def ofctl(self, target, version, argv, timeout=30):
        return self.finish(self.start(target, version, argv), target,
                           timeout)

    def keep(self, label, side, rc, out, err):
        base = os.path.join(self.dir, "%04d-%s" % (self.n, side))
        with open(base + ".txt", "w") as f:
            f.write("$ %s\nrc=%s\n--- stdout\n%s--- stderr\n%s"
                    % (label, rc, out, err))

    def compare(self, label, ref, test, order="exact", ports=False,
                sort_field="priority"):
        """Compares two (rc, out, err) results; records a failure."""
        self.steps += 1
        ok = True
        report = []
        for what, a, b in (("exit status", str(ref[0]), str(test[0])),
                           ("stdout", ref[1], test[1]),
                           ("stderr", ref[2], test[2])):
            a, b = normalise(a, ports), normalise(b, ports)
            if what != "exit status" and order == "any":
                a = "".join(sorted(a.splitlines(True)))
                b = "".join(sorted(b.splitlines(True)))
            if a == b:
                continue
            if what == "stdout" and order == "ties" and \
               same_with_ties(a, b, sort_field):
                continue
            ok = False
            diff = difflib.unified_diff(
                a.splitlines(True), b.splitlines(True),
                "reference", "under test", lineterm="")
            report.append("%s differs (- reference, + under test, "
                          "normalised):\n%s" % (what, "".join(
                              l if l.endswith("\n") else l + "\n"
                              for l in diff)))
        if not ok:
            self.failures.append("FAIL %s\n%s" % (label, "".join(report)))
            if not self.args.quiet:
                print(self.failures[-1], end="", flush=True)
        return ok

    def both(self, version, argv, order="exact", ports=False,
             sort_field="priority", label=None):
        """Runs "ovs-ofctl -O VERSION ARGV" (@T: the switch) on both."""
        self.n += 1
        label = label or "%s: ovs-ofctl %s" % (version or "default",
                                               " ".join(argv))
        # The two run at the same time: they are independent, and the
        # session's time is mostly ovs-ofctl starting up.
        pr = self.start(self.ref, version, argv)
        pt = self.start(self.test, version, argv)
        ref = self.finish(pr, self.ref)
        test = self.finish(pt, self.test)
        self.keep(label, "ref", *ref)
        self.keep(label, "test", *test)
        self.compare(label, ref, test, order, ports, sort_field)
        return ref, test


# ---------------------------------------------------------------------------
# The flows.

def mac(i, j):
    return "0a:00:00:%02x:%02x:%02x" % (i & 0xff, (j >> 8) & 0xff, j & 0xff)


def antrea_like(rng, v):
    """An Antrea-style program for version 'v' (list of add-flow lines).
    OpenFlow 1.0 has no goto_table, groups, meters or write_metadata: there
    the program resubmits and balances services with a learn() instead."""
    of10 = v == "OpenFlow10"

    def goto(t):
        return "resubmit(,%d)" % t if of10 else "goto_table:%d" % t

    flows = []
    pods = rng.randint(12, 20)
    for p in range(pods):
        port = 1 + p % 3
        ip = "10.10.%d.%d" % (p // 200, 2 + p % 200)
        m = mac(1, p)
        ck = "cookie=0x%x" % (0x1000000 + p)
        flows += [
            "table=0,priority=190,%s,in_port=%d,dl_src=%s,actions="
            "load:0x2->NXM_NX_REG0[0..3],%s" % (ck, port, m, goto(10)),
            "table=10,priority=200,%s,ip,in_port=%d,dl_src=%s,nw_src=%s,"
            "actions=%s" % (ck, port, m, ip, goto(20)),
            "table=10,priority=200,%s,arp,in_port=%d,arp_spa=%s,arp_sha=%s,"
            "actions=%s" % (ck, port, ip, m, goto(20)),
            "table=40,priority=200,%s,ip,reg0=0x2/0xf,nw_dst=%s,actions="
            "mod_dl_src:0a:00:00:00:00:01,mod_dl_dst:%s,dec_ttl,%s"
            % (ck, ip, m, goto(60)),
            "table=60,priority=200,%s,dl_dst=%s,actions=load:0x%x->"
            "NXM_NX_REG1[],load:0x1->NXM_NX_REG0[16],%s"
            % (ck, m, port, goto(70)),
        ]
    flows += [
        "table=0,priority=0,actions=drop",
        "table=10,priority=0,actions=drop",
        "table=20,priority=200,ip,actions=ct(table=21,zone=65520,nat)",
        "table=20,priority=0,actions=%s" % goto(21),
        "table=21,priority=190,ct_state=+inv+trk,ip,actions=drop",
        "table=21,priority=200,ct_state=-new+trk,ct_mark=0x2/0x2,ip,"
        "actions=load:0x1->NXM_NX_REG0[9],%s" % goto(40),
        "table=21,priority=0,actions=%s" % goto(30),
        "table=30,priority=0,actions=%s" % goto(40),
        "table=40,priority=0,actions=%s" % goto(50),
        "table=50,priority=0,actions=%s" % goto(60),
        "table=60,priority=0,actions=drop",
        "table=70,priority=200,ip,reg0=0x10000/0x10000,"
        "actions=output:NXM_NX_REG1[]",
        "table=70,priority=100,reg0=0x10000/0x10000,"
        "actions=output:NXM_NX_REG1[]",
        "table=70,priority=0,actions=drop",
    ]
    # Services: a group per service (select over endpoints) where groups
    # exist, and session affinity through learn().
    for s in range(rng.randint(4, 8)):
        vip = "10.96.%d.%d" % (s // 250, 1 + s % 250)
        port = rng.choice([53, 80, 443, 8080, 6443])
        proto = rng.choice(["tcp", "udp"])
        ck = "cookie=0x%x" % (0x2000000 + s)
        dst = "NXM_OF_TCP_DST[]" if proto == "tcp" else "NXM_OF_UDP_DST[]"
        learn = ("learn(table=31,idle_timeout=%d,priority=200,"
                 "delete_learned,cookie=0x%x,eth_type=0x800,nw_proto=%d,"
                 "%s,NXM_OF_IP_DST[],NXM_OF_IP_SRC[],"
                 "load:NXM_NX_REG3[]->NXM_NX_REG3[],"
                 "load:0x2->NXM_NX_REG4[16..18])"
                 % (rng.choice([300, 10800]), 0x3000000 + s,
                    6 if proto == "tcp" else 17, dst))
        if of10:
            flows.append("table=30,priority=200,%s,%s,nw_dst=%s,tp_dst=%d,"
                         "actions=%s,load:0x%x->NXM_NX_REG3[],%s"
                         % (ck, proto, vip, port, learn,
                            rng.getrandbits(32), goto(40)))
        else:
            flows.append("table=30,priority=200,%s,%s,reg4=0x10000/0x70000,"
                         "nw_dst=%s,tp_dst=%d,actions=load:0x2->"
                         "NXM_NX_REG4[16..18],group:%d"
                         % (ck, proto, vip, port, 100 + s))
            flows.append("table=30,priority=190,%s,%s,reg4=0x30000/0x70000,"
                         "nw_dst=%s,tp_dst=%d,actions=%s,%s"
                         % (ck, proto, vip, port, learn, goto(40)))
    # Network policies: conjunctions of source addresses and ports.
    for c in range(rng.randint(3, 6)):
        conj = 10 + c
        ck = "cookie=0x%x" % (0x4000000 + c)
        for k in range(rng.randint(1, 4)):
            flows.append("table=50,priority=%d,%s,ip,nw_src=10.10.0.%d,"
                         "actions=conjunction(%d,1/2)"
                         % (200 - c, ck, 2 + rng.randrange(200), conj))
        for k in range(rng.randint(1, 3)):
            flows.append("table=50,priority=%d,%s,tcp,tp_dst=%d,"
                         "actions=conjunction(%d,2/2)"
                         % (200 - c, ck, rng.randrange(1, 65536), conj))
        flows.append("table=50,priority=%d,%s,conj_id=%d,ip,actions="
                     "load:0x%x->NXM_NX_REG5[],ct(commit,table=60,"
                     "zone=65520,exec(load:0x%x->NXM_NX_CT_LABEL[0..31]))"
                     % (200 - c, ck, conj, conj, conj))
    if not of10:
        flows.append("table=70,priority=300,ip,reg0=0x10000/0x10000,"
                     "nw_dst=10.10.0.2,actions=meter:1,"
                     "output:NXM_NX_REG1[]")
        flows.append("table=0,priority=50,in_port=3,actions="
                     "write_metadata:0x%x/0xffff,%s"
                     % (rng.getrandbits(16), goto(10)))
    return flows


def ovn_like(rng, v):
    """An OVN-style program: logical switches (metadata), logical ports
    (reg14 in, reg15 out), resubmit chains as ovn-controller writes them."""
    flows = []
    for dp in range(1, rng.randint(2, 4) + 1):
        md = "metadata=0x%x" % dp
        lports = rng.randint(4, 9)
        for lp in range(1, lports + 1):
            m = mac(2 + dp, lp)
            port = 1 + (dp + lp) % 3
            ck = "cookie=0x%x" % rng.getrandbits(32)
            flows += [
                "table=0,priority=100,%s,in_port=%d,dl_src=%s,actions="
                "load:0x%x->NXM_NX_REG13[],load:0x%x->OXM_OF_METADATA[],"
                "load:0x%x->NXM_NX_REG14[],resubmit(,8)"
                % (ck, port, m, dp * 16 + lp, dp, lp),
                "table=8,priority=50,%s,reg14=0x%x,%s,dl_src=%s,"
                "actions=resubmit(,9)" % (ck, lp, md, m),
                "table=9,priority=90,%s,ip,reg14=0x%x,%s,dl_src=%s,"
                "nw_src=192.168.%d.%d,actions=resubmit(,10)"
                % (ck, lp, md, m, dp, lp),
                "table=9,priority=90,%s,arp,reg14=0x%x,%s,dl_src=%s,"
                "arp_spa=192.168.%d.%d,arp_sha=%s,actions=resubmit(,10)"
                % (ck, lp, md, m, dp, lp, m),
                "table=23,priority=50,%s,%s,dl_dst=%s,actions="
                "load:0x%x->NXM_NX_REG15[],resubmit(,37)" % (ck, md, m, lp),
                "table=65,priority=100,%s,reg15=0x%x,%s,actions=output:%d"
                % (ck, lp, md, port),
            ]
        flows += [
            "table=8,priority=100,%s,vlan_tci=0x1000/0x1000,actions=drop"
            % md,
            "table=8,priority=100,%s,dl_src=01:00:00:00:00:00/"
            "01:00:00:00:00:00,actions=drop" % md,
            "table=10,priority=100,ip,%s,actions=ct(table=11,"
            "zone=NXM_NX_REG13[0..15])" % md,
            "table=11,priority=65535,ct_state=+new-est+trk,ip,%s,"
            "actions=load:0x1->NXM_NX_XXREG0[97],resubmit(,12)" % md,
            "table=11,priority=65535,ct_state=-new+est-rel+rpl+trk,"
            "ct_label=0/0x1,ip,%s,actions=resubmit(,12)" % md,
            "table=11,priority=65535,ct_state=+inv+trk,ip,%s,actions=drop"
            % md,
            "table=12,priority=100,ip,reg0=0x2/0x2,%s,actions="
            "ct(commit,zone=NXM_NX_REG13[0..15],exec(load:0->"
            "NXM_NX_CT_LABEL[0])),resubmit(,13)" % md,
            "table=12,priority=0,%s,actions=resubmit(,13)" % md,
            "table=13,priority=110,icmp6,%s,nw_ttl=255,icmp_type=135,"
            "icmp_code=0,actions=push:NXM_NX_REG0[],push:NXM_NX_XXREG0[96..127],"
            "controller(userdata=00.00.00.10.00.00.00.00),"
            "pop:NXM_NX_XXREG0[96..127],pop:NXM_NX_REG0[]" % md,
            "table=13,priority=100,arp,%s,arp_op=1,actions="
            "move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],"
            "mod_dl_src:0a:00:00:00:00:fe,load:0x2->NXM_OF_ARP_OP[],"
            "move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],"
            "move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],"
            "move:NXM_NX_REG14[]->NXM_NX_REG15[],load:0x1->NXM_NX_REG10[0],"
            "resubmit(,37)" % md,
            "table=13,priority=0,%s,actions=note:00.00.00.02.00.00.00.00,"
            "resubmit(,23)" % md,
            "table=23,priority=0,%s,actions=load:0xffff->NXM_NX_REG15[],"
            "resubmit(,37)" % md,
            "table=37,priority=100,reg15=0xffff,%s,actions=ct_clear,"
            "resubmit(,65)" % md,
            "table=37,priority=0,%s,actions=resubmit(,38)" % md,
            "table=38,priority=0,%s,actions=resubmit(,65)" % md,
        ]
    flows.append("table=66,priority=100,reg0=0xc0a80101,reg15=0x1,"
                 "metadata=0x1,actions=mod_dl_dst:0a:00:00:00:01:01,"
                 "load:0x1->NXM_NX_REG10[6]")
    flows.append("table=67,priority=100,arp,reg15=0x1,metadata=0x1,"
                 "actions=learn(table=66,priority=100,"
                 "NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],"
                 "NXM_NX_REG0[]=NXM_OF_ARP_SPA[],"
                 "NXM_NX_REG15[]=NXM_NX_REG15[],"
                 "load:0x1->NXM_NX_REG10[6]),resubmit(,68)")
    if v != "OpenFlow10":
        flows.append("table=65,priority=10,reg15=0xfffe,actions="
                     "mod_vlan_vid:%d,group:1" % rng.randint(1, 4094))
    return flows


def every_action_flows():
    """tests/every-action.flows without comments (for OpenFlow 1.5, which
    carries every action they use)."""
    with open(os.path.join(HERE, "every-action.flows")) as f:
        return [l.strip() for l in f
                if l.strip() and not l.startswith("#")]


def strip_comment(flow):
    return flow.split("#", 1)[0].rstrip().rstrip(",")


SHORT_TIMEOUT = re.compile(r"(?<![a-z_])((?:idle|hard)_timeout)=(0x[0-9a-fA-F]+|[0-9]+)")


def random_flows(seed, v, count):
    """flowgen.py's flows for 'v': the nxm set for OpenFlow 1.0, of13
    otherwise.  Those in table 254 are left out (Open vSwitch reserves
    it: EPERM on every flow, a check that needs no repeating)."""
    fset = "nxm" if v == "OpenFlow10" else "of13"
    out = []
    for f in flowgen.flows(seed, count * 2, fset):
        f = strip_comment(f)
        if "table=254" in f:
            continue
        # A flow's own timeout of a few seconds would expire during the
        # session at a moment that depends on the machine's load, and two
        # switches would count differently: at least ten minutes (0, no
        # timeout, stays).
        f = SHORT_TIMEOUT.sub(lambda m: "%s=%d" % (m.group(1), max(
            int(m.group(2), 0), 600) if int(m.group(2), 0) else 0), f)
        out.append(f)
        if len(out) == count:
            break
    return out


# ---------------------------------------------------------------------------
# A raw OpenFlow client, for messages ovs-ofctl would refuse to send (its
# own checks stop a flow with a missing prerequisite or a goto_table
# backwards before it reaches the switch).

def of_exchange(target, version, msgs, timeout=5.0):
    """Sends hello and 'msgs' (bytes, xids 1..n) then a barrier to the
    unix socket of 'target'; returns the messages received after the hello
    and before the barrier reply (bytes each)."""
    path = target[len("unix:"):]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    buf = b""

    def recv_msg():
        nonlocal buf
        while True:
            if len(buf) >= 8:
                n = struct.unpack("!H", buf[2:4])[0]
                if n >= 8 and len(buf) >= n:
                    m, buf = buf[:n], buf[n:]
                    return m
            chunk = s.recv(65536)
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk

    try:
        s.sendall(struct.pack("!BBHI", version, 0, 8, 0))
        hello = recv_msg()
        if hello[1] != 0:
            raise EOFError("no hello first")
        barrier = 20 if version >= 4 else 18
        out = b"".join(msgs) + struct.pack("!BBHI", version, barrier, 8,
                                           0xfffe)
        s.sendall(out)
        replies = []
        while True:
            m = recv_msg()
            if m[1] == 2:            # echo request: answer it
                s.sendall(bytes([version, 3]) + m[2:])
                continue
            if m[1] == barrier + 1 and struct.unpack("!I", m[4:8])[0] \
               == 0xfffe:
                return replies
            replies.append(m)
    finally:
        s.close()


def oxm(field, value, nbytes):
    return struct.pack("!HBB", 0x8000, field << 1, nbytes) + \
        value.to_bytes(nbytes, "big")


def of13_flow_mod(version, xid, table, priority, oxms, instructions):
    """An OFPT_FLOW_MOD (ADD) of OpenFlow 1.3-1.5 with an OXM match."""
    match = b"".join(oxms)
    mlen = 4 + len(match)
    match = struct.pack("!HH", 1, mlen) + match + \
        b"\0" * ((8 - mlen % 8) % 8)
    body = struct.pack("!QQBBHHHIIIHH", 0, 0, table, 0, 0, 0, priority,
                       0xffffffff, 0xffffffff, 0xffffffff, 0, 0)
    msg = body + match + b"".join(instructions)
    return struct.pack("!BBHI", version, 14, 8 + len(msg), xid) + msg


def goto_table(t):
    return struct.pack("!HHB3x", 1, 8, t)


def apply_actions(*acts):
    a = b"".join(acts)
    return struct.pack("!HH4x", 4, 8 + len(a)) + a


def act_group(g):
    return struct.pack("!HHI", 22, 8, g)


def act_output(p):
    return struct.pack("!HHIH6x", 0, 16, p, 0xffff)


def raw_refusals(version):
    """(label, message) pairs each of which a switch must refuse."""
    w = WIRE_VERSION[version]
    eth_ip = oxm(5, 0x0800, 2)
    tcp = oxm(10, 6, 1)
    return [
        # tcp_dst with neither eth_type nor ip_proto: OFPBMC_BAD_PREREQ.
        ("tcp_dst without its prerequisites",
         of13_flow_mod(w, 1, 0, 10, [oxm(14, 80, 2)],
                       [apply_actions(act_output(1))])),
        # ip_proto without eth_type=IP(v6).
        ("ip_proto without eth_type",
         of13_flow_mod(w, 1, 0, 10, [tcp], [apply_actions(act_output(1))])),
        # A goto_table to an earlier table: OFPBIC_BAD_TABLE_ID.
        ("goto_table backwards",
         of13_flow_mod(w, 1, 5, 10, [eth_ip], [goto_table(2)])),
        # A group that does not exist: OFPBAC_BAD_OUT_GROUP.
        ("an unknown group",
         of13_flow_mod(w, 1, 0, 10, [eth_ip, tcp, oxm(14, 22, 2)],
                       [apply_actions(act_group(4242))])),
        # An output to no port (0 is not a port).
        ("output to port 0",
         of13_flow_mod(w, 1, 0, 10, [eth_ip],
                       [apply_actions(act_output(0))])),
    ]


def ofp_print(msg):
    """What ovs-ofctl ofp-print makes of 'msg' (bytes)."""
    p = subprocess.run(["ovs-ofctl", "ofp-print", msg.hex()],
                       capture_output=True, text=True)
    return p.stdout + p.stderr


# ---------------------------------------------------------------------------
# The script.

def write(path, lines):
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))
    return path


def monitor_step(ses, v, changes):
    """Runs "ovs-ofctl monitor @T watch:!initial" against both switches while
    'changes' (ovs-ofctl argument lists) are applied to each, and compares
    the event lines."""
    procs = {}
    for side, target in (("ref", ses.ref), ("test", ses.test)):
        f = open(os.path.join(ses.dir, "monitor-%s-%s.txt" % (v, side)),
                 "w+")
        # ovs-ofctl monitor opens a control socket in OVS_RUNDIR: the
        # session's directory, not the system's.
        env = dict(os.environ, OVS_RUNDIR=os.path.abspath(ses.dir))
        p = subprocess.Popen(["ovs-ofctl", "-O", v, "monitor", target,
                              "watch:!initial"], stdout=f,
                             stderr=subprocess.STDOUT, env=env)
        procs[side] = (p, f)
    time.sleep(0.4)
    for argv in changes:
        for target in (ses.ref, ses.test):
            ses.ofctl(target, v, argv)
    time.sleep(0.6)
    out = {}
    for side, (p, f) in procs.items():
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        f.seek(0)
        out[side] = f.read().replace(ses.ref if side == "ref"
                                     else ses.test, "@T")
        f.close()
    ses.n += 1
    ses.compare("%s: ovs-ofctl monitor watch:!initial while flows change"
                % v,
                (0, out["ref"], ""), (0, out["test"], ""))


def pcap_packets(path):
    """The packets of a pcap file, as bytes each (timestamps dropped)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") \
        else ">"
    pkts, off = [], 24
    while off + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        pkts.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return pkts


# Packets for packet-out: an ARP request, a TCP SYN, a UDP datagram.
PACKETS = [
    "ffffffffffff0a00000000010806000108000604000" +
    "10a00000000010a0000010000000000000a000002",
    "0a00000000020a0000000001080045000028000100004006" +
    "0000" + "0a0000010a000002" + "04d2005000000000000000005002200000000000",
    "0a00000000020a00000000010800450000200001000040110000" +
    "0a0000010a00000204d20035000c0000deadbeef",
]


def session(ses, v, seed):
    B = ses.both
    rng = random.Random("ofctl-diff:%d:%s" % (seed, v))
    d = ses.dir
    of10 = v == "OpenFlow10"
    tag = "%s-%d" % (v, seed)

    # A clean slate (not compared: what was there depends on the run).
    for target in (ses.ref, ses.test):
        ses.ofctl(target, v, ["del-flows", "@T"])
        if not of10:
            ses.ofctl(target, v, ["del-groups", "@T"])
            ses.ofctl(target, v, ["del-meters", "@T"])

    B(v, ["show", "@T"], ports=True)
    B(v, ["dump-ports-desc", "@T"], ports=True)
    B(v, ["dump-tables", "@T"])

    # Groups and meters first: flows refer to them.
    if not of10:
        groups = ["group_id=1,type=all,bucket=output:1,bucket=output:2",
                  "group_id=2,type=indirect,bucket=mod_dl_dst:"
                  "0a:00:00:00:00:02,output:2",
                  "group_id=3,type=ff,bucket=watch_port:1,output:1,"
                  "bucket=watch_port:2,output:2"]
        for s in range(8):
            nb = rng.randint(1, 4)
            groups.append("group_id=%d,type=select,%s" % (100 + s, ",".join(
                "bucket=weight:%d,ct(commit,table=40,zone=65520,"
                "nat(dst=10.10.0.%d:%d))" % (rng.randint(1, 100),
                                             2 + rng.randrange(200),
                                             rng.choice([80, 8080, 443]))
                for _ in range(nb))))
        B(v, ["add-group", "@T", groups[0]])
        B(v, ["add-groups", "@T", write("%s/groups-%s.txt" % (d, tag),
                                        groups[1:])])
        B(v, ["dump-groups", "@T"], order="any")
        # (OpenFlow 1.3 and 1.4 cannot ask for one group: all come.)
        B(v, ["dump-groups", "@T", "group_id=2"], order="any")
        B(v, ["mod-group", "@T", "group_id=2,type=indirect,bucket=output:3"])
        B(v, ["add-group", "@T", "group_id=2,type=all,bucket=output:1"])
        B(v, ["dump-group-features", "@T"])
        meters = ["meter=1,kbps,band=type=drop,rate=10000",
                  "meter=2,pktps,burst,stats,band=type=drop,rate=1000,"
                  "burst_size=100",
                  "meter=3,kbps,band=type=dscp_remark,rate=5000,prec_level=1"]
        for m in meters:
            B(v, ["add-meter", "@T", m])
        B(v, ["add-meter", "@T", meters[0]])
        B(v, ["mod-meter", "@T", "meter=2,pktps,stats,band=type=drop,"
              "rate=2000"])
        B(v, ["dump-meters", "@T"])
        B(v, ["meter-features", "@T"])

    # Single flows, then the program in one add-flows, then the random
    # flows one at a time (each may be refused; both must agree).
    B(v, ["add-flow", "@T", "priority=1000,in_port=1,actions=output:2"])
    B(v, ["add-flow", "@T", "table=1,priority=5,cookie=0x77,udp,"
          "tp_dst=53,actions=output:3"])
    B(v, ["add-flow", "@T", "idle_timeout=600,hard_timeout=900,"
          "send_flow_rem,priority=7,ip,nw_dst=192.0.2.0/24,actions=drop"])
    program = antrea_like(rng, v) + ovn_like(rng, v)
    rng.shuffle(program)
    B(v, ["add-flows", "@T", write("%s/program-%s.txt" % (d, tag),
                                   program)])
    B(v, ["dump-aggregate", "@T"])
    # (Each costs two runs of ovs-ofctl: every-action.flows goes to two
    # versions, flowgen's few to each.)
    extra = every_action_flows() if v == "OpenFlow15" else []
    for f in extra + random_flows(seed, v, 6):
        B(v, ["add-flow", "@T", f])

    # Refusals ovs-ofctl lets through to the switch.
    B(v, ["add-flow", "@T", "priority=9,ip,actions=group:4242"])
    B(v, ["add-flow", "@T", "check_overlap,priority=1000,in_port=1,"
          "actions=drop"])
    B(v, ["add-flow", "@T", "table=1,priority=5,udp,tp_dst=53,"
          "actions=output:4"])
    if not of10:
        B(v, ["add-flow", "@T", "priority=9,ip,actions=meter:4242,"
              "output:1"])
        B(v, ["add-flow", "@T", "table=3,priority=9,ip,actions=goto_table:"
              "200"])
        B(v, ["del-groups", "@T", "group_id=4242"])
        # Refusals ovs-ofctl would not send: raw messages.
        for label, msg in raw_refusals(v):
            ses.n += 1
            results = []
            for target in (ses.ref, ses.test):
                try:
                    got = "".join(ofp_print(m)
                                  for m in of_exchange(target,
                                                       WIRE_VERSION[v],
                                                       [msg]))
                    results.append((0, got, ""))
                except (OSError, EOFError) as e:
                    results.append((1, "", "raw exchange failed: %s\n" % e))
            lab = "%s: raw flow mod (%s)" % (v, label)
            ses.keep(lab, "ref", *results[0])
            ses.keep(lab, "test", *results[1])
            ses.compare(lab, *results)

    # Dumps.
    B(v, ["dump-flows", "@T"], order="any")
    B(v, ["dump-flows", "--no-stats", "@T"], order="any")
    B(v, ["dump-flows", "--sort", "@T"], order="ties")
    B(v, ["dump-flows", "--rsort", "@T"], order="ties")
    B(v, ["dump-flows", "--sort=tp_dst", "@T", "tcp"], order="ties",
      sort_field="tp_dst")
    B(v, ["dump-flows", "--rsort=priority", "@T", "table=10"], order="ties")
    B(v, ["dump-flows", "@T", "table=50"], order="any")
    B(v, ["dump-flows", "@T", "ip,nw_src=10.10.0.0/16"], order="any")
    B(v, ["dump-flows", "@T", "cookie=0x1000000/0xff000000"], order="any")
    B(v, ["dump-flows", "@T", "out_port=2"], order="any")
    B(v, ["dump-aggregate", "@T", "table=0"])
    B(v, ["dump-aggregate", "@T", "cookie=0x2000000/0xff000000"])
    B(v, ["dump-aggregate", "@T", "out_port=3"])
    B(v, ["dump-tables", "@T"])

    # Packets: out of port 2 directly, and through the tables.
    for i, pkt in enumerate(PACKETS):
        B(v, ["packet-out", "@T", "in_port=%s packet=%s actions=%s"
              % ("controller" if i == 0 else "1", pkt,
                 "output:2" if i == 0 else "table")])
    B(v, ["dump-ports", "@T"], ports=True, order="any")
    B(v, ["dump-ports", "@T", "2"], ports=True)
    B(v, ["dump-flows", "@T", "in_port=1"], order="any")
    B(v, ["dump-tables", "@T"])
    if not of10:
        B(v, ["dump-group-stats", "@T"], order="any")
        B(v, ["meter-stats", "@T"])

    # Changes.
    B(v, ["mod-flows", "@T", "table=60,actions=drop"])
    B(v, ["mod-flows", "--strict", "@T", "table=1,priority=5,udp,"
          "tp_dst=53,actions=output:1"])
    B(v, ["mod-flows", "@T", "cookie=0x2000000/0xff000000,"
          "actions=output:3"])
    B(v, ["del-flows", "--strict", "@T", "priority=1000,in_port=1"])
    B(v, ["del-flows", "--strict", "@T", "table=1,priority=6,udp,"
          "tp_dst=53"])
    B(v, ["del-flows", "@T", "table=10,arp"])
    B(v, ["del-flows", "@T", "cookie=0x4000000/0xff000000"])
    B(v, ["del-flows", "@T", "out_port=3"])
    B(v, ["dump-aggregate", "@T"])
    B(v, ["dump-flows", "--sort", "@T", "table=0"], order="ties")

    # The monitor sees the next changes as they happen.
    monitor_step(ses, v, [
        ["add-flow", "@T", "table=2,priority=7,cookie=0x99,tcp,"
         "tp_dst=22,actions=output:1"],
        ["mod-flows", "@T", "table=2,tcp,actions=output:2"],
        ["del-flows", "@T", "table=2"]])

    # replace-flows and diff-flows.
    repl = program[: len(program) // 2] + [
        "table=5,priority=5,icmp,actions=output:1",
        "table=0,priority=1001,in_port=2,actions=output:1"]
    rfile = write("%s/replace-%s.txt" % (d, tag), repl)
    B(v, ["replace-flows", "@T", rfile])
    B(v, ["diff-flows", "@T", rfile], order="any")
    B(v, ["diff-flows", "@T", "%s/program-%s.txt" % (d, tag)], order="any")
    B(v, ["dump-aggregate", "@T"])

    # A bundle: all or nothing.
    bfile = write("%s/bundle-%s.txt" % (d, tag),
                  ["table=6,priority=%d,tcp,tp_dst=%d,actions=output:%d"
                   % (i, 1000 + i, 1 + i % 3) for i in range(1, 41)])
    B(v, ["--bundle", "add-flows", "@T", bfile])
    bad = write("%s/bundle-bad-%s.txt" % (d, tag),
                ["table=7,priority=1,ip,actions=drop",
                 "table=7,priority=2,ip,actions=group:4343"])
    B(v, ["--bundle", "add-flows", "@T", bad])
    B(v, ["dump-flows", "--sort", "@T", "table=6"], order="ties")
    B(v, ["dump-flows", "@T", "table=7"])
    B(v, ["--bundle", "replace-flows", "@T", rfile])
    B(v, ["dump-aggregate", "@T"])

    # Tear down.
    if not of10:
        B(v, ["del-groups", "@T", "group_id=3"])
        B(v, ["dump-groups", "@T"], order="any")
        B(v, ["del-meter", "@T", "meter=3"])
        B(v, ["dump-meters", "@T"])
    B(v, ["del-flows", "@T"])
    B(v, ["dump-flows", "@T"])
    if not of10:
        B(v, ["del-groups", "@T"])
        B(v, ["del-meters", "@T"])
        B(v, ["dump-groups", "@T"])


def groups_session(ses, v):
    """Groups, meters and TLV maps alone (the --part groups run): every
    group, meter and TLV command of ovs-ofctl, the errors a switch gives
    for what it refuses, and the stats and features replies."""
    B = ses.both
    d = ses.dir
    of15 = v == "OpenFlow15"
    for target in (ses.ref, ses.test):
        ses.ofctl(target, v, ["del-flows", "@T"])
        ses.ofctl(target, v, ["del-groups", "@T"])
        ses.ofctl(target, v, ["del-meters", "@T"])
        ses.ofctl(target, v, ["del-tlv-map", "@T"])

    groups = ["group_id=2,type=indirect,bucket=mod_dl_dst:"
              "0a:00:00:00:00:02,output:2",
              "group_id=3,type=ff,bucket=watch_port:1,output:1,"
              "bucket=watch_port:2,watch_group:2,output:2",
              "group_id=4,type=select,bucket=weight:10,output:1,"
              "bucket=weight:20,set_field:10.0.0.9->ip_dst,output:2,"
              "bucket=actions=output:3"]
    if of15:
        groups.append("group_id=5,type=select,selection_method=hash,"
                      "fields(ip_dst=255.255.255.0,nw_proto,tcp_src),"
                      "bucket=bucket_id:1,weight:3,output:1,"
                      "bucket=bucket_id:7,weight:5,output:2")
        groups.append("group_id=6,type=select,selection_method=dp_hash,"
                      "selection_method_param=7,bucket=bucket_id:0,output:1")
    B(v, ["add-group", "@T", "group_id=1,type=all,bucket=output:1,"
          "bucket=output:2,bucket=output:3"])
    B(v, ["add-groups", "@T", write("%s/ogroups-%s.txt" % (d, v), groups)])
    B(v, ["add-group", "@T", "group_id=1,type=all,bucket=output:3"])
    B(v, ["add-group", "@T", "group_id=9,type=indirect,bucket=output:1,"
          "bucket=output:2"])
    B(v, ["add-group", "@T", "group_id=9,type=all,bucket=watch_port:1,"
          "output:1"])
    B(v, ["add-group", "@T", "group_id=9,type=ff,bucket=output:1"])
    B(v, ["dump-groups", "@T"], order="any")
    B(v, ["mod-group", "@T", "group_id=2,type=indirect,bucket=output:3"])
    B(v, ["mod-group", "@T", "group_id=77,type=all,bucket=output:3"])
    B(v, ["mod-group", "--may-create", "@T",
          "group_id=77,type=all,bucket=output:3"])
    B(v, ["mod-group", "@T", "group_id=77,type=select,bucket=output:1,"
          "bucket=weight:0,output:2"])
    B(v, ["dump-groups", "@T"], order="any")
    if of15:
        B(v, ["dump-groups", "@T", "group_id=5"], order="any")
        B(v, ["insert-buckets", "@T", "group_id=1,command_bucket_id=first,"
              "bucket=bucket_id:10,output:4,bucket=bucket_id:11,output:5"])
        B(v, ["insert-buckets", "@T", "group_id=1,command_bucket_id=last,"
              "bucket=bucket_id:12,output:6"])
        B(v, ["insert-buckets", "@T", "group_id=1,command_bucket_id=1,"
              "bucket=bucket_id:13,output:7"])
        B(v, ["insert-buckets", "@T", "group_id=1,command_bucket_id=99,"
              "bucket=bucket_id:14,output:7"])
        B(v, ["insert-buckets", "@T", "group_id=1,command_bucket_id=last,"
              "bucket=bucket_id:13,output:7"])
        B(v, ["insert-buckets", "@T", "group_id=5,command_bucket_id=7,"
              "bucket=bucket_id:8,weight:9,output:3"])
        B(v, ["insert-buckets", "@T", "group_id=404,command_bucket_id=last,"
              "bucket=bucket_id:1,output:3"])
        B(v, ["dump-groups", "@T", "group_id=1"], order="any")
        B(v, ["remove-buckets", "@T", "group_id=1,command_bucket_id=first"])
        B(v, ["remove-buckets", "@T", "group_id=1,command_bucket_id=last"])
        B(v, ["remove-buckets", "@T", "group_id=1,command_bucket_id=13"])
        B(v, ["remove-buckets", "@T", "group_id=1,command_bucket_id=99"])
        B(v, ["dump-groups", "@T"], order="any")
        B(v, ["remove-buckets", "@T", "group_id=5,command_bucket_id=all"])
        B(v, ["dump-groups", "@T", "group_id=5"], order="any")
    # Flows that use groups and meters, added in OpenFlow 1.3 whatever the
    # version (what a flow mod of each version means is the flow part's
    # concern, not this part's).
    B("OpenFlow13", ["add-flow", "@T", "priority=9,ip,actions=group:1"])
    B("OpenFlow13", ["add-flow", "@T", "priority=8,arp,actions=group:4"])
    B(v, ["dump-group-stats", "@T"], order="any")
    B(v, ["dump-group-stats", "@T", "group_id=4"])
    B(v, ["dump-group-features", "@T"])
    B(v, ["del-groups", "@T", "group_id=1"])
    # (Flow statistics in OpenFlow 1.3: flowdpd does not write 1.5's OXS
    # statistics yet.)
    B("OpenFlow13", ["dump-flows", "@T"], order="any")
    B(v, ["del-groups", "@T", "group_id=404"])
    B(v, ["dump-groups", "@T"], order="any")

    meters = ["meter=1,kbps,band=type=drop,rate=10000",
              "meter=2,pktps,burst,stats,band=type=drop,rate=1000,"
              "burst_size=100",
              "meter=3,kbps,burst,band=type=drop,rate=500,"
              "type=drop,rate=900,burst_size=50"]
    for m in meters:
        B(v, ["add-meter", "@T", m])
    B(v, ["add-meter", "@T", meters[0]])
    B(v, ["add-meter", "@T", "meter=4,kbps,band=type=dscp_remark,"
          "rate=5000,prec_level=1"])
    B(v, ["mod-meter", "@T", "meter=2,pktps,stats,band=type=drop,rate=2000"])
    B(v, ["mod-meter", "@T", "meter=9,pktps,band=type=drop,rate=2000"])
    B(v, ["dump-meters", "@T"])
    B(v, ["dump-meters", "@T", "meter=2"])
    B(v, ["dump-meters", "@T", "meter=42"])
    if v != "OpenFlow10":
        # (In the 1.0 run no meter exists: a flow naming one is the flow
        # part's error to compare.)
        B("OpenFlow13", ["add-flow", "@T",
                         "priority=7,udp,actions=meter:2,output:1"])
    B(v, ["meter-stats", "@T"])
    B(v, ["meter-stats", "@T", "meter=2"])
    B(v, ["meter-features", "@T"])
    B(v, ["del-meter", "@T", "meter=2"])
    B("OpenFlow13", ["dump-flows", "@T"], order="any")
    B(v, ["del-meter", "@T", "meter=42"])
    B(v, ["dump-meters", "@T"])
    B(v, ["del-meters", "@T"])
    B(v, ["dump-meters", "@T"])

    B(v, ["add-tlv-map", "@T", "{class=0xffff,type=0,len=4}->tun_metadata0,"
          "{class=0x102,type=0x80,len=8}->tun_metadata3"])
    B(v, ["dump-tlv-map", "@T"])
    B(v, ["add-tlv-map", "@T", "{class=0xffff,type=1,len=4}->tun_metadata0"])
    B(v, ["add-tlv-map", "@T", "{class=0xffff,type=5,len=4}->tun_metadata5,"
          "{class=0xffff,type=5,len=4}->tun_metadata6"])
    B(v, ["del-tlv-map", "@T", "{class=0xffff,type=0,len=4}->tun_metadata0"])
    B(v, ["dump-tlv-map", "@T"])
    B(v, ["del-tlv-map", "@T"])
    B(v, ["dump-tlv-map", "@T"])
    for target in (ses.ref, ses.test):
        ses.ofctl(target, v, ["del-flows", "@T"])
        ses.ofctl(target, v, ["del-groups", "@T"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref",
                    help="the reference switch (ovs-ofctl target)")
    ap.add_argument("--test",
                    help="the switch under test (ovs-ofctl target)")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--versions", default=",".join(VERSIONS))
    ap.add_argument("--dir", default="ofctl-diff.d")
    ap.add_argument("--ref-pcap")
    ap.add_argument("--test-pcap")
    ap.add_argument("--pcaps-only", action="store_true",
                    help="compare --ref-pcap and --test-pcap only")
    ap.add_argument("--part", choices=["all", "groups"], default="all",
                    help="groups: only the group, meter and TLV map "
                    "session (groups_session())")
    ap.add_argument("--quiet", action="store_true",
                    help="print only the summary and the failures' labels")
    args = ap.parse_args()
    seeds = [int(s) for s in (args.seeds + " " +
                              os.environ.get("OFCTL_DIFF_SEEDS", "")).split()]
    versions = [v for v in args.versions.split(",") if v]
    for v in versions:
        if v not in VERSIONS:
            ap.error("unknown version %s (one of %s)" % (v, VERSIONS))
    if not args.pcaps_only and not (args.ref and args.test):
        ap.error("--ref and --test are required")
    ses = Session(args)
    t0 = time.time()
    for seed in seeds if not args.pcaps_only else []:
        print("seed %d" % seed, flush=True)
        for v in versions:
            if args.part == "groups":
                groups_session(ses, v)
            else:
                session(ses, v, seed)
    if args.ref_pcap and args.test_pcap:
        ses.n += 1
        a = [p.hex() + "\n" for p in pcap_packets(args.ref_pcap)]
        b = [p.hex() + "\n" for p in pcap_packets(args.test_pcap)]
        ses.compare("packets sent on port 2", (0, "".join(a), ""),
                    (0, "".join(b), ""))
    print("%d steps in %.1f s, %d differ" % (ses.steps, time.time() - t0,
                                             len(ses.failures)))
    if ses.failures and args.quiet:
        for f in ses.failures:
            print(f.splitlines()[0])
    return 1 if ses.failures else 0


if __name__ == "__main__":
    sys.exit(main())
