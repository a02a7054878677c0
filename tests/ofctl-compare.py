#!/usr/bin/env python3
"""Differential test: flowdp-ctl parse-flows against ovs-ofctl parse-flows.

    ofctl-compare.py --flowdp-ctl PATH [--seed N] [--count N] [--keep DIR]

Generates two random corpora with flowgen.py (COUNT flows each): "nxm",
which ovs-ofctl parses under its default protocol selection, and "of13",
which it parses with "-O OpenFlow13".  Each corpus goes through ovs-ofctl
once and through "PATH parse-flows FILE" once.  For every flow, ovs-ofctl's
flow_mod line

    NXT_FLOW_MOD (xid=0x1): ADD [table:N ]MATCH [cookie:0xN ]
                            [idle:N ][hard:N ]actions=ACTIONS

(one line; OFPT_FLOW_MOD and "(OF1.3)" variants too) is rewritten into the
"ovs-ofctl dump-flows --no-stats" form that flowdp-ctl prints,

    [cookie=0xN, ][table=N, ][idle_timeout=N, ][hard_timeout=N, ]
    MATCH actions=ACTIONS

(one line; MATCH and its trailing space are absent for an empty match),
where each prefix item appears only when non-zero, and the two lines must be
identical.  ovs-ofctl prints "table:255" (NXM) or nothing (OpenFlow 1.3)
for a flow without "table=", and nothing for table=0; flowgen never writes
table=255, so all of these mean table 0.

A flow that ovs-ofctl rejects, warns about, silently changes ("normalization
changed ofp_match"), cannot decode back, or accepts only as "inconsistent"
(OpenFlow 1.0/NXM only) is a flowgen bug.

The corpora include the pipeline's syntax (registers, metadata,
conj_id, goto_table, resubmit, load, move, write_metadata, conjunction),
each set in its protocol's canonical spelling (see flowgen.py).

Then, for each set, BAD-COUNT flows from flowgen.bad_flows(), each with
one token that is out of range, a mask on a field that takes none, or the
one mask such a field does take, go through both programs one at a time
(each stops at its first bad line).  Where ovs-ofctl rejects a flow,
flowdp-ctl must exit non-zero with a "column N: " message; where it
accepts one, flowdp-ctl must print the same line, except for the flows
flowgen marks "stricter" (ovs-ofctl silently repairs them, flowdp refuses
them, with a column).  Any other outcome is a disagreement.

Exit status: 0 if every flow agrees, 1 if some differ or flowdp-ctl fails,
2 if ovs-ofctl rejects or mangles a generated flow (a flowgen.py bug).
"""

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True          # keep the source tree clean
sys.path.insert(0, HERE)
import flowgen                          # noqa: E402

SETS = [("nxm", []), ("of13", ["-O", "OpenFlow13"])]

FLOW_MOD_RE = re.compile(
    r"^(?:OFPT|NXT)_FLOW_MOD(?: \(OF1\.\d\))? \(xid=(0x[0-9a-f]+)\): (.*)$")
FLOWDP_RE = re.compile(
    r"^(?:cookie=(0x[0-9a-f]+), )?(?:table=(\d+), )?"
    r"(?:idle_timeout=(\d+), )?(?:hard_timeout=(\d+), )?(.*)$")


class GeneratorBug(Exception):
    pass


def out(text=""):
    sys.stdout.write(text + "\n")


def run(argv, path):
    try:
        p = subprocess.run(argv + ["parse-flows", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
    except OSError as e:
        raise RuntimeError("cannot run %s: %s" % (argv[0], e))
    return p.returncode, p.stdout, p.stderr


def ovs_record(body):
    """Split the part after "ADD " of an ovs-ofctl flow_mod line.

    Returns (cookie, table, idle, hard, match, actions) with numbers as
    ints (cookie as its text), or raises ValueError."""
    if not body.startswith("ADD"):
        raise ValueError("not an ADD flow_mod")
    body = body[3:].lstrip(" ")
    i = body.find("actions=")
    if i < 0:
        raise ValueError("no actions=")
    head, actions = body[:i], body[i + len("actions="):]
    cookie, table, idle, hard, match = None, 0, 0, 0, None
    for tok in head.split():
        m = re.match(r"^(table|cookie|idle|hard):(\S+)$", tok)
        if m:
            key, val = m.groups()
            if key == "table":
                table = int(val)
            elif key == "cookie":
                if not re.match(r"^0x[0-9a-f]+$", val):
                    raise ValueError("odd cookie %r" % val)
                cookie = val
            elif key == "idle":
                idle = int(val)
            else:
                hard = int(val)
        elif match is None and ":" not in tok.split("=", 1)[0]:
            match = tok
        else:
            raise ValueError("unexpected token %r" % tok)
    if table == 255:                    # "no table given" in NXM
        table = 0
    return cookie, table, idle, hard, match or "", actions


def flowdp_form(rec):
    cookie, table, idle, hard, match, actions = rec
    prefix = ""
    if cookie is not None and int(cookie, 16) != 0:
        prefix += "cookie=%s, " % cookie
    if table:
        prefix += "table=%d, " % table
    if idle:
        prefix += "idle_timeout=%d, " % idle
    if hard:
        prefix += "hard_timeout=%d, " % hard
    return prefix + (match + " " if match else "") + "actions=" + actions


def find_culprits(ovs, opts, lines, tmpdir, limit=5):
    """Run ovs-ofctl on each flow alone; return (index, message) pairs."""
    found = []
    path = os.path.join(tmpdir, "one.flows")
    for i, line in enumerate(lines):
        with open(path, "w") as f:
            f.write(line + "\n")
        rc, so, se = run([ovs] + opts, path)
        if rc or se.strip() or "decode error" in so:
            msg = (se.strip() or so.strip()).splitlines()
            found.append((i, " | ".join(msg[-3:])))
        elif not oxm_usable(so):
            found.append((i, "actions inconsistent with the match (%s)"
                          % usable(so)))
        else:
            continue
        if len(found) >= limit:
            break
    return found


def usable(text):
    m = re.search(r"^usable protocols: (\S+)", text, re.M)
    return m.group(1) if m else "?"


def oxm_usable(text):
    """True if ovs-ofctl's "usable protocols" line allows OpenFlow 1.3.

    ovs-ofctl lets flows whose actions contradict the match (strip_vlan
    without a VLAN, dec_ttl on non-IP, ...) through as "inconsistent" in
    OpenFlow 1.0 and NXM only, so a corpus restricted to "OpenFlow10,NXM"
    has such a flow in it."""
    u = usable(text)
    return u == "any" or "OXM" in u.split(",")



def ovs_parse(ovs, opts, lines, path, tmpdir, keep):
    rc, so, se = run([ovs] + opts, path)
    m = re.search(r"^chosen protocol: (\S+)", so, re.M)
    if not opts and m and not m.group(1).startswith("NXM"):
        # Only for tiny corpora: when every flow fits OpenFlow 1.0,
        # ovs-ofctl picks it, and OpenFlow 1.0 silently loses some
        # vlan_tci values (vlan_tci=0xec65 comes back as 0x0000).
        opts = ["-F", "nxm"]
        rc, so, se = run([ovs] + opts, path)
    if keep:
        save(keep, os.path.basename(path) + ".ovs.out", so)
        save(keep, os.path.basename(path) + ".ovs.err", se)
    problems = []
    recs = [None] * len(lines)
    for line in so.splitlines():
        m = FLOW_MOD_RE.match(line)
        if not m:
            continue
        idx = int(m.group(1), 16) - 1
        if not 0 <= idx < len(lines):
            problems.append("ovs-ofctl printed unexpected xid: " + line)
            continue
        if "decode error" in m.group(2):
            problems.append("flow %d: ovs-ofctl cannot decode its own "
                            "encoding (%s): %s"
                            % (idx + 1, m.group(2).strip("* "), lines[idx]))
            continue
        try:
            recs[idx] = ovs_record(m.group(2))
        except ValueError as e:
            problems.append("flow %d: cannot read ovs-ofctl output (%s): %s"
                            % (idx + 1, e, line))
    if rc or se.strip():
        m = re.search(r":(\d+): (.*)", se)
        if rc and m and 1 <= int(m.group(1)) <= len(lines):
            n = int(m.group(1))
            problems.append("flow %d rejected by ovs-ofctl (%s): %s"
                            % (n, m.group(2).strip(), lines[n - 1]))
        else:
            problems.append("ovs-ofctl exit %d, stderr: %s"
                            % (rc, " | ".join(se.strip().splitlines()[:4])))
            for i, msg in find_culprits(ovs, opts, lines, tmpdir):
                problems.append("flow %d alone: %s: %s"
                                % (i + 1, msg, lines[i]))
    elif not oxm_usable(so):
        problems.append("ovs-ofctl finds actions inconsistent with the "
                        "match (usable protocols: %s)" % usable(so))
        for i, msg in find_culprits(ovs, opts, lines, tmpdir):
            problems.append("flow %d alone: %s: %s" % (i + 1, msg, lines[i]))
    if not problems:
        missing = [i for i, r in enumerate(recs) if r is None]
        if missing:
            problems.append("ovs-ofctl printed no flow_mod for %d flows "
                            "(first: flow %d)" % (len(missing),
                                                  missing[0] + 1))
    if problems:
        raise GeneratorBug("\n".join(problems))
    return [flowdp_form(r) for r in recs]


def save(keep, name, text):
    with open(os.path.join(keep, name), "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(
        description="Compare flowdp-ctl parse-flows with ovs-ofctl.")
    ap.add_argument("--flowdp-ctl", required=True, metavar="PATH",
                    help="flowdp-ctl program to test")
    ap.add_argument("--ovs-ofctl", default="ovs-ofctl", metavar="PATH",
                    help="ovs-ofctl program (default: ovs-ofctl)")
    ap.add_argument("--seed", type=int, default=None,
                    help="random seed (default: from the clock)")
    ap.add_argument("--count", type=int, default=1000,
                    help="flows per corpus (default: 1000)")
    ap.add_argument("--bad-count", type=int, default=100, metavar="N",
                    help="bad flows per set, checked one at a time "
                    "(default: 100)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep corpora and outputs in DIR")
    ap.add_argument("--show", type=int, default=10, metavar="N",
                    help="print at most N mismatches (default: 10)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time()) % 100000

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        tmpdir = args.keep
    else:
        tmpdir = tempfile.mkdtemp(prefix="ofctl-compare.")
    try:
        return compare(args, seed, tmpdir)
    finally:
        if not args.keep:
            shutil.rmtree(tmpdir, ignore_errors=True)


def compare(args, seed, tmpdir):
    keep = args.keep
    total = agree = 0
    shown = 0
    failed = False
    for fset, opts in SETS:
        lines = flowgen.flows(seed, args.count, fset)
        path = os.path.join(tmpdir, fset + ".flows")
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))

        try:
            expect = ovs_parse(args.ovs_ofctl, opts, lines, path, tmpdir,
                               keep)
        except GeneratorBug as e:
            out("ofctl-compare: GENERATOR BUG: ovs-ofctl %sparse-flows does "
                "not accept the %s corpus (seed %d, count %d):"
                % ("".join(o + " " for o in opts), fset, seed, args.count))
            for line in str(e).splitlines()[:20]:
                out("  " + line)
            return 2
        except RuntimeError as e:
            out("ofctl-compare: %s" % e)
            return 2

        try:
            rc, so, se = run([args.flowdp_ctl], path)
        except RuntimeError as e:
            out("ofctl-compare: %s" % e)
            return 1
        if keep:
            save(keep, fset + ".flows.flowdp.out", so)
            save(keep, fset + ".flows.flowdp.err", se)
            save(keep, fset + ".flows.expected",
                 "".join(x + "\n" for x in expect))
        got = so.splitlines()
        if rc != 0:
            failed = True
            out("ofctl-compare: %s parse-flows exited with status %d on the "
                "%s corpus; stderr:" % (args.flowdp_ctl, rc, fset))
            for line in se.strip().splitlines()[:10]:
                out("  " + line)
        elif se.strip():
            out("ofctl-compare: note: %s wrote to stderr on the %s corpus:"
                % (args.flowdp_ctl, fset))
            for line in se.strip().splitlines()[:5]:
                out("  " + line)
        if len(got) != len(lines):
            failed = True
            out("ofctl-compare: %s printed %d lines for %d %s flows"
                % (args.flowdp_ctl, len(got), len(lines), fset))

        set_agree = 0
        for i, (line, exp) in enumerate(zip(lines, expect)):
            mine = got[i] if i < len(got) else None
            if mine == exp:
                set_agree += 1
                continue
            if shown < args.show:
                shown += 1
                out("mismatch %d: %s flow %d (%s)"
                    % (shown, fset, i + 1, describe(exp, mine)))
                out("  input:  " + line)
                out("  ovs:    " + exp)
                out("  flowdp: " + ("(no line)" if mine is None else mine))
        out("ofctl-compare: %s: %d flows, %d agree, %d differ"
            % (fset, len(lines), set_agree, len(lines) - set_agree))
        total += len(lines)
        agree += set_agree

    bad_total = bad_agree = 0
    flowdp = direct_command(args.flowdp_ctl)
    for fset, opts in SETS:
        n, ok, shown = compare_bad(args, flowdp, fset, opts, seed, tmpdir,
                                   shown)
        if n is None:
            return 2
        out("ofctl-compare: %s: %d bad flows, %d agree, %d differ"
            % (fset, n, ok, n - ok))
        bad_total += n
        bad_agree += ok

    out("ofctl-compare: %d flows, %d agree, %d differ (seed %d)"
        % (total + bad_total, agree + bad_agree,
           total + bad_total - agree - bad_agree, seed))
    return 0 if agree + bad_agree == total + bad_total and not failed else 1


def direct_command(path):
    """(argv, env) that run PATH, bypassing a libtool wrapper script: a
    bad flow needs one run per flow, and the wrapper costs 50 ms a run."""
    try:
        with open(path, "rb") as f:
            head = f.read(16384).decode("latin-1")
    except OSError:
        return [path], None
    m = re.search(r'^\s*LD_LIBRARY_PATH="([^"$]*):\$LD_LIBRARY_PATH"', head,
                  re.M)
    real = os.path.join(os.path.dirname(path), ".libs",
                        os.path.basename(path))
    if "libtool" not in head or not m or not os.access(real, os.X_OK):
        return [path], None
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = m.group(1) + ":" + env.get("LD_LIBRARY_PATH",
                                                        "")
    return [real], env


def run_one(argv, env, line, path):
    with open(path, "w") as f:
        f.write(line + "\n")
    p = subprocess.run(argv + ["parse-flows", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def check_bad(args, flowdp, opts, line, expect, path):
    """None if the two programs behave as EXPECT says, else a message."""
    # One flow alone often fits OpenFlow 1.0, which ovs-ofctl then picks
    # and which loses some vlan_tci values (see ovs_parse()).
    rc, so, se = run_one([args.ovs_ofctl] + (opts or ["-F", "nxm"]), None,
                         line, path)
    mods = [FLOW_MOD_RE.match(x) for x in so.splitlines()]
    mods = [m for m in mods if m and "decode error" not in m.group(2)]
    ovs_ok = rc == 0 and len(mods) == 1
    frc, fso, fse = run_one(flowdp[0], flowdp[1], line, path + ".fdp")
    fdp_ok = frc == 0
    ovs_says = ("accepts: " + flowdp_form(ovs_record(mods[0].group(2)))
                if ovs_ok else "rejects: " + se.strip().splitlines()[-1]
                if se.strip() else "rejects")
    fdp_says = ("accepts: " + fso.strip() if fdp_ok
                else "rejects: " + fse.strip())
    if ovs_ok != (expect != "reject"):
        return "flowgen expected ovs-ofctl to %s it; ovs %s" % (
            "reject" if expect == "reject" else "accept", ovs_says)
    if expect == "accept":
        if fdp_ok and fso.strip() == ovs_says[len("accepts: "):]:
            return None
    elif not fdp_ok and re.search(r":1: column \d+: ", fse):
        return None
    return "ovs %s; flowdp %s" % (ovs_says, fdp_says)


def compare_bad(args, flowdp, fset, opts, seed, tmpdir, shown):
    """Checks the bad corpus of FSET; returns (count, agreeing, shown)."""
    bad = flowgen.bad_flows(seed, args.bad_count, fset)
    if args.keep:
        save(args.keep, fset + ".bad", "".join("%s %s\n" % (e, l)
                                               for l, e in bad))

    def job(i):
        path = os.path.join(tmpdir, "bad-%s-%d.flows" % (fset, i + 1))
        return check_bad(args, flowdp, opts, bad[i][0], bad[i][1], path)

    # One process per flow and program: two at a time halves the wait.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(job, range(len(bad))))
    ok = 0
    for i, problem in enumerate(results):
        if problem is None:
            ok += 1
            continue
        if shown < args.show:
            shown += 1
            out("mismatch %d: %s bad flow %d (%s)"
                % (shown, fset, i + 1, bad[i][1]))
            out("  input:  " + bad[i][0])
            out("  " + problem)
    return len(bad), ok, shown


def split_flowdp(line):
    """(prefix fields, match, actions) of a line in flowdp's format."""
    m = FLOWDP_RE.match(line)
    rest = m.group(5)
    if rest.startswith("actions="):
        match, actions = "", rest[len("actions="):]
    else:
        i = rest.find(" actions=")
        if i < 0:
            return None
        match, actions = rest[:i], rest[i + len(" actions="):]
    return m.group(1, 2, 3, 4), match, actions


def describe(exp, mine):
    """Say which parts of the line differ."""
    if mine is None:
        return "missing"
    a, b = split_flowdp(exp), split_flowdp(mine)
    if b is None:
        return "unreadable flowdp line"
    parts = []
    if a[0] != b[0]:
        parts.append("cookie/table/timeouts")
    if a[1] != b[1]:
        parts.append("match")
    if a[2] != b[2]:
        parts.append("actions")
    return " and ".join(parts) + " differ" if parts else "layout differs"


if __name__ == "__main__":
    sys.exit(main())
