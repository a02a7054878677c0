#!/usr/bin/env python3
"""Random programs with groups for tests/group-diff.at, which runs them
through Open vSwitch (ovs-vswitchd, dummy datapath) and flowdp
(flowdp-ctl run --ordered --groups) and compares what comes out.

  group-diff.py gen exact SEED DIR
        DIR/groups.txt and DIR/flows.txt: all, indirect and fast_failover
        groups (buckets that rewrite headers then output, a bucket's
        several outputs of which the action set keeps one, a resubmit
        from a bucket with a register loaded, a group reached from a
        bucket, a fast_failover bucket watching a port that does not
        exist), flows sending UDP packets to them with actions before and
        after; DIR/packets.txt ("PORT HEX", in arrival order) and
        DIR/in1.pcap.  Compared packet for packet on ports 2, 3 and 4.
  group-diff.py gen select SEED DIR
        select groups (default, dp_hash, hash with fields) of two or
        three buckets with weights, each bucket to its own port, and
        SELECT_PACKETS packets of distinct 5-tuples; DIR/shares.txt has
        each port's expected share.  Compared by shares: each side's
        share of each port within 20 % of the expected one.
  group-diff.py compare exact DIR
  group-diff.py compare select DIR
        exits 1 (printing every difference) on disagreement.

Ports: 1 receives; 2, 3 and 4 send (the test adds p3 and p4 to the
peer's bridge).
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcapgen as g  # noqa: E402

OUT_PORTS = (2, 3, 4)
SELECT_PACKETS = 900
SRC_MAC = "00:00:00:00:00:01"
DST_MAC = "00:00:00:00:00:02"


def rand_mac(rng):
    return "0a:00:00:%02x:%02x:%02x" % (rng.randrange(256),
                                        rng.randrange(256),
                                        rng.randrange(256))


def rewrite(rng):
    """A header rewrite a bucket or a flow may do to a UDP/IPv4 packet."""
    return rng.choice([
        "mod_dl_src:%s" % rand_mac(rng),
        "mod_dl_dst:%s" % rand_mac(rng),
        "mod_nw_src:10.9.%d.%d" % (rng.randrange(256), rng.randrange(256)),
        "mod_nw_tos:%d" % (4 * rng.randrange(64)),
        "mod_tp_src:%d" % rng.randrange(1, 65536),
    ])


def bucket_actions(rng, allow_two_outputs=True):
    acts = []
    for _ in range(rng.randrange(3)):
        acts.append(rewrite(rng))
    if allow_two_outputs and rng.random() < 0.2:
        # An action set keeps the last output only.
        acts.append("output:%d" % rng.choice(OUT_PORTS))
    acts.append("output:%d" % rng.choice(OUT_PORTS))
    rng.shuffle(acts)
    return ",".join(acts)


def exact_program(rng):
    groups, flows, dsts = [], [], []
    ids = rng.sample(range(1, 200), 8)
    resub = 1 + rng.randrange(200)
    kinds = ["all", "all", "indirect", "ff", "chain", "resubmit"]
    rng.shuffle(kinds)
    made = {}
    for kind, gid in zip(kinds, ids):
        if kind == "all":
            n = 1 + rng.randrange(3)
            buckets = ["bucket=" + bucket_actions(rng) for _ in range(n)]
            groups.append("group_id=%d,type=all,%s" % (gid, ",".join(buckets)))
            made.setdefault("all", gid)
        elif kind == "indirect":
            groups.append("group_id=%d,type=indirect,bucket=actions=%s"
                          % (gid, bucket_actions(rng)))
        elif kind == "ff":
            ports = list(OUT_PORTS)
            rng.shuffle(ports)
            buckets = ["bucket=watch_port:9,output:9"] if rng.random() < .5 \
                else []
            for p in ports[:2]:
                buckets.append("bucket=watch_port:%d,actions=%soutput:%d"
                               % (p, rewrite(rng) + "," if rng.random() < .5
                                  else "", p))
            groups.append("group_id=%d,type=fast_failover,%s"
                          % (gid, ",".join(buckets)))
        elif kind == "resubmit":
            groups.append("group_id=%d,type=indirect,bucket=load:0x%x->NXM_"
                          "NX_REG0[],resubmit(,1)" % (gid, resub))
            flows.append("table=1,reg0=0x%x,actions=output:%d"
                         % (resub, rng.choice(OUT_PORTS)))
            flows.append("table=1,priority=0,actions=output:%d"
                         % rng.choice(OUT_PORTS))
        made[kind if kind != "all" else "all-%d" % gid] = gid
    # The chain: an indirect group whose bucket reaches an all group
    # (defined before it: Open vSwitch refuses no forward reference, but
    # keep the file readable).
    chain = made["chain"]
    groups.append("group_id=%d,type=indirect,bucket=group:%d"
                  % (chain, made["all"]))
    for kind, gid in made.items():
        if kind == "all":
            continue
        dst = 1000 + len(dsts)
        dsts.append(dst)
        before = rewrite(rng) + "," if rng.random() < .4 else ""
        after = ",output:%d" % rng.choice(OUT_PORTS) \
            if rng.random() < .4 else ""
        flows.append("priority=10,udp,tp_dst=%d,actions=%sgroup:%d%s"
                     % (dst, before, gid, after))
    flows.append("priority=0,actions=drop")
    return groups, flows, dsts


def udp_packet(rng, dst_port, src=None, sport=None):
    src = src or "10.0.%d.%d" % (rng.randrange(256), rng.randrange(1, 255))
    sport = sport or rng.randrange(1024, 65536)
    ip = g.ipv4_l4(src, "10.1.0.1", 17, sport, dst_port,
                   b"group-diff payload", tos=0)
    return g.eth(DST_MAC, SRC_MAC, 0x0800, ip)


def select_program(rng):
    groups, flows, shares = [], [], {}
    methods = ["", ",selection_method=dp_hash",
               ",selection_method=hash,fields(ip_src,udp_src)",
               ",selection_method=hash,fields(ip_src)"]
    method = rng.choice(methods)
    n = rng.choice([2, 3])
    ports = list(OUT_PORTS)
    rng.shuffle(ports)
    weights = [rng.choice([1, 2]) if rng.random() < .5 else 1
               for _ in range(n)]
    buckets = ["bucket=weight:%d,actions=output:%d" % (w, p)
               for w, p in zip(weights, ports[:n])]
    groups.append("group_id=7,type=select%s,%s" % (method, ",".join(buckets)))
    flows.append("udp,tp_dst=53,actions=group:7")
    for w, p in zip(weights, ports[:n]):
        shares[p] = w / sum(weights)
    return groups, flows, shares, method


def write_common(outdir, groups, flows, seq, about):
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "groups.txt"), "w") as f:
        f.write("".join(x + "\n" for x in groups))
    with open(os.path.join(outdir, "flows.txt"), "w") as f:
        f.write("".join(x + "\n" for x in flows))
    with open(os.path.join(outdir, "packets.txt"), "w") as f:
        for data in seq:
            f.write("1 %s\n" % data.hex())
    g.write_pcap(os.path.join(outdir, "in1.pcap"),
                 [(1000000 + 1000 * i, d) for i, d in enumerate(seq)])
    with open(os.path.join(outdir, "about.txt"), "w") as f:
        f.write(about + "\n")


def gen(kind, seed, outdir):
    rng = random.Random("%s-%d" % (kind, seed))
    if kind == "exact":
        groups, flows, dsts = exact_program(rng)
        seq = []
        for dst in dsts:
            for _ in range(3):
                seq.append(udp_packet(rng, dst))
        for _ in range(3):
            seq.append(udp_packet(rng, 7))       # No group: dropped.
        rng.shuffle(seq)
        write_common(outdir, groups, flows, seq,
                     "exact seed %d: %d groups, %d packets"
                     % (seed, len(groups), len(seq)))
    else:
        groups, flows, shares, method = select_program(rng)
        seen = set()
        seq = []
        while len(seq) < SELECT_PACKETS:
            src = "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256),
                                   rng.randrange(1, 255))
            sport = rng.randrange(1024, 65536)
            if (src, sport) in seen:
                continue
            seen.add((src, sport))
            seq.append(udp_packet(rng, 53, src, sport))
        write_common(outdir, groups, flows, seq,
                     "select seed %d: method '%s', %d packets"
                     % (seed, method, len(seq)))
        with open(os.path.join(outdir, "shares.txt"), "w") as f:
            for p, s in sorted(shares.items()):
                f.write("%d %.6f\n" % (p, s))


def packets_of(d, who, port):
    path = os.path.join(d, "%s-out%d.pcap" % (who, port))
    return [p for _, p in g.read_pcap(path)] if os.path.exists(path) else []


def compare_exact(d):
    status = 0
    for port in OUT_PORTS:
        ovs, fdp = packets_of(d, "ovs", port), packets_of(d, "fdp", port)
        if ovs != fdp:
            status = 1
            print("port %d: Open vSwitch sent %d packets, flowdp %d"
                  % (port, len(ovs), len(fdp)))
            for i in range(max(len(ovs), len(fdp))):
                a = ovs[i] if i < len(ovs) else None
                b = fdp[i] if i < len(fdp) else None
                if a != b:
                    print("  first difference at packet %d:" % (i + 1))
                    print("    ovs: %s" % (a.hex() if a else "(none)"))
                    print("    fdp: %s" % (b.hex() if b else "(none)"))
                    break
    return status


def compare_select(d):
    status = 0
    with open(os.path.join(d, "shares.txt")) as f:
        want = {int(p): float(s) for p, s in (x.split() for x in f)}
    for who in ("ovs", "fdp"):
        counts = {p: len(packets_of(d, who, p)) for p in OUT_PORTS}
        total = sum(counts.values())
        if total != SELECT_PACKETS:
            status = 1
            print("%s: %d packets out, expected %d" % (who, total,
                                                       SELECT_PACKETS))
            continue
        for p in OUT_PORTS:
            share = counts[p] / total
            expect = want.get(p, 0.0)
            ok = abs(share - expect) <= 0.2 * expect if expect else \
                counts[p] == 0
            print("%s port %d: share %.3f, expected %.3f%s"
                  % (who, p, share, expect, "" if ok else "  <- outside 20 %"))
            if not ok:
                status = 1
    return status


def main():
    args = sys.argv[1:]
    if len(args) == 4 and args[0] == "gen" and args[1] in ("exact",
                                                           "select"):
        gen(args[1], int(args[2]), args[3])
        return 0
    if len(args) == 3 and args[0] == "compare":
        return compare_exact(args[2]) if args[1] == "exact" \
            else compare_select(args[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
