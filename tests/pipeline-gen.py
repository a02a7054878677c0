#!/usr/bin/env python3
"""Random multi-table programs for "flowdp-ctl classify": flows and packets.

usage: pipeline-gen.py --seed N --tables N --flows N --packets N FLOWS PACKETS

Each flow goes to a random table and matches a few of tcp/udp nw_src,
nw_dst, tp_dst, in_port and reg0/reg1/metadata, drawn from small sets of
values (so that ties, overlaps and register matches are common), at a
priority from a small set.  Its actions mix output, load into reg0/reg1,
load into metadata, resubmit (mostly to a later table, sometimes to any,
its own included, so that a few loops run into the resubmit limits) and
goto_table to a later table.  A
quarter of the tables also hold a conjunction: two clauses (source
addresses x destination ports) and its conj_id flow.  Each flow has its
own cookie, so the output names the flows hit.  The expected answers come
from "flowdp-ctl classify --linear" (a scan of every flow of each table),
not from here.
"""

import argparse
import random

ADDRS = ["10.0.0.%d" % i for i in range(1, 9)]
PORTS = [22, 53, 80, 443, 8080]
PRIORITIES = [1, 10, 20, 30]


def match(rng, table):
    parts = [rng.choice(["tcp", "udp", "ip"])]
    for field, values in (("nw_src", ADDRS), ("nw_dst", ADDRS),
                          ("in_port", [1, 2, 3])):
        if rng.random() < 0.3:
            parts.append("%s=%s" % (field, rng.choice(values)))
    if parts[0] != "ip" and rng.random() < 0.3:
        parts.append("tp_dst=%d" % rng.choice(PORTS))
    if table and rng.random() < 0.4:
        parts.append("reg0=%d" % rng.randrange(4))
    if table and rng.random() < 0.2:
        parts.append("reg1=%d" % rng.randrange(3))
    if table and rng.random() < 0.15:
        parts.append("metadata=%#x" % rng.randrange(3))
    return parts


def actions(rng, table, n_tables):
    acts = []
    for _ in range(rng.randrange(0, 4)):
        kind = rng.random()
        if kind < 0.3:
            acts.append("output:%d" % rng.randrange(1, 5))
        elif kind < 0.5:
            acts.append("load:%d->NXM_NX_REG%d[]" % (rng.randrange(4),
                                                     rng.randrange(2)))
        elif kind < 0.6:
            acts.append("load:%#x->OXM_OF_METADATA[]" % rng.randrange(3))
        elif table + 1 < n_tables and rng.random() < 0.9:
            acts.append("resubmit(,%d)" % rng.randrange(table + 1, n_tables))
        else:
            acts.append("resubmit(,%d)" % rng.randrange(n_tables))
    if table + 1 < n_tables and rng.random() < 0.4:
        acts.append("goto_table:%d" % rng.randrange(table + 1, n_tables))
    return ",".join(acts) if acts else "drop"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--flows", type=int, required=True)
    ap.add_argument("--packets", type=int, required=True)
    ap.add_argument("flows_file")
    ap.add_argument("packets_file")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    n_tables = args.tables

    cookie = 0
    lines = []
    for _ in range(args.flows):
        cookie += 1
        table = rng.randrange(n_tables)
        lines.append("table=%d,cookie=%#x,priority=%d,%s,actions=%s"
                     % (table, cookie, rng.choice(PRIORITIES),
                        ",".join(match(rng, table)),
                        actions(rng, table, n_tables)))
    for table in range(n_tables):
        if rng.random() >= 0.25:
            continue
        conj_id = table + 1
        priority = 40           # Above every other flow: it can win.
        for addr in rng.sample(ADDRS, 3):
            cookie += 1
            lines.append("table=%d,cookie=%#x,priority=%d,ip,nw_src=%s,"
                         "actions=conjunction(%d,1/2)"
                         % (table, cookie, priority, addr, conj_id))
        for port in rng.sample(PORTS, 2):
            cookie += 1
            lines.append("table=%d,cookie=%#x,priority=%d,tcp,tp_dst=%d,"
                         "actions=conjunction(%d,2/2)"
                         % (table, cookie, priority, port, conj_id))
        cookie += 1
        lines.append("table=%d,cookie=%#x,priority=%d,conj_id=%d,ip,"
                     "actions=%s" % (table, cookie, priority, conj_id,
                                     actions(rng, table, n_tables)))
    rng.shuffle(lines)
    with open(args.flows_file, "w") as f:
        f.write("\n".join(lines) + "\n")

    with open(args.packets_file, "w") as f:
        for _ in range(args.packets):
            proto = rng.choice(["tcp", "udp"])
            f.write("in_port=%d,%s,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d\n"
                    % (rng.randrange(1, 4), proto, rng.choice(ADDRS),
                       rng.choice(ADDRS), rng.randrange(1024, 1100),
                       rng.choice(PORTS)))


if __name__ == "__main__":
    main()
