#!/usr/bin/env python3
"""children_vs_trace.py — the children collector against cdpkit's own launch trace, on a sample.

cdpkit's samples keep their own trace of every device launch (the launch layer's records, written
with --profile). This runs one sample once under the children collector (libcdpkit_children.so,
which knows nothing of cdpkit) and compares, for each traced run of the sample's profile, the
collector's records of the same stretch of time (launch calls between the run's first request
and its last child's end, on the same %globaltimer clock):

  - grids launched from the device: the same number;
  - their sizes: the same multiset of (blocks, threads per block);
  - the grids by depth: printed, and with --depths the same histogram (exact only where the
    collector's pairing of calls with grids is: cdpkit/children/grids.hpp);
  - the grids' durations (last block exit - first block entry): the medians side by side (the
    launch layer times a child's body from inside it, the collector from its patches around it;
    printed, not compared).

Usage: children_vs_trace.py <libcdpkit_children.so> <folder> [--depths] -- <sample> <args...>
The sample gets --profile <folder>/own.json appended. Exit 0 every count agrees, 1 a difference
(each one line), 2 bad arguments or the sample failed, 77 no usable GPU.
"""
import json
import os
import statistics
import subprocess
import sys
from collections import Counter


def launched(doc):
    """Per traced run: (name, launched records as dicts, whether every request's record is there)."""
    out = []
    for run in doc.get("runs", []):
        trace = run.get("trace")
        if not trace:
            continue
        records = trace["records"]
        fields = records["fields"]
        rows = [dict(zip(fields, row)) for row in records["rows"]]
        whole = records.get("dropped", 0) == 0 and records.get("in_profile") == records.get("requested")
        name = "%s/%s" % (run.get("algorithm", "?"), run.get("variant", "?"))
        out.append((name, [r for r in rows if r["outcome"] == "launched"], whole))
    return out


def durations(records):
    return [r["end_ns"] - r["start_ns"] for r in records
            if r["start_ns"] is not None and r["end_ns"] is not None and r["end_ns"] >= r["start_ns"]]


def main(argv):
    if "--" not in argv or argv.index("--") < 2:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    library, folder, options, sample = argv[0], argv[1], argv[2:split], argv[split + 1:]
    if not sample or any(o != "--depths" for o in options):
        print(__doc__, file=sys.stderr)
        return 2
    depths_too = "--depths" in options
    os.makedirs(folder, exist_ok=True)
    own_path, children_path = os.path.join(folder, "own.json"), os.path.join(folder, "children.json")
    for p in (own_path, children_path):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, CUDA_INJECTION64_PATH=library, CDPKIT_PROFILE_OUT=children_path, CDPKIT_INJECT_QUIET="1")
    done = subprocess.run(sample + ["--profile", own_path], env=env, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    if "no CUDA device" in done.stderr or "no usable CUDA device" in done.stderr:
        print("skip: no usable CUDA device")
        return 77
    if done.returncode != 0 or not os.path.exists(own_path) or not os.path.exists(children_path):
        print("the sample exited with %d (own profile %s, children profile %s)" % (
            done.returncode, "written" if os.path.exists(own_path) else "missing",
            "written" if os.path.exists(children_path) else "missing"), file=sys.stderr)
        return 2
    with open(own_path, encoding="utf-8") as f:
        own = launched(json.load(f))
    with open(children_path, encoding="utf-8") as f:
        children = launched(json.load(f))
    if len(children) != 1:
        print("the children profile holds %d traced runs, not 1" % len(children), file=sys.stderr)
        return 2
    theirs = children[0][1]
    if not children[0][2]:
        print("the children profile's records are cut short", file=sys.stderr)
        return 2
    problems = compared = 0
    for name, mine, whole in own:
        if not mine:
            print("%s: no device launches in the launch layer's trace" % name)
            continue
        if not whole:
            print("%s: the launch layer's trace kept only some of its records: not compared" % name)
            continue
        compared += 1
        begin = min(r["t_ns"] for r in mine)
        end = max([r["end_ns"] for r in mine if r["end_ns"] is not None] + [r["t_ns"] for r in mine])
        seen = [r for r in theirs if begin <= r["t_ns"] <= end]
        rows = [
            ("grids launched", len(mine), len(seen)),
            ("sizes (blocks x threads)", Counter((r["blocks"], r["child_block_threads"]) for r in mine),
             Counter((r["blocks"], r["child_block_threads"]) for r in seen)),
        ]
        rows.append(("grids by depth", Counter(r["depth"] for r in mine), Counter(r["depth"] for r in seen)))
        for what, a, b in rows:
            same = a == b
            checked = depths_too or what != "grids by depth"
            problems += checked and not same
            shown_a = a if not isinstance(a, Counter) else "%d kinds" % len(a)
            shown_b = b if not isinstance(b, Counter) else "%d kinds" % len(b)
            if what == "grids by depth":
                shown_a, shown_b = dict(sorted(a.items())), dict(sorted(b.items()))
            print("%s: %s: launch layer %s, children collector %s%s" % (
                name, what, shown_a, shown_b, "" if same else "  DIFFERENT" if checked else "  (differs; not checked)"))
        da, db = durations(mine), durations(seen)
        if da and db:
            print("%s: median grid duration: launch layer %.1f us, children collector %.1f us" % (
                name, statistics.median(da) / 1e3, statistics.median(db) / 1e3))
    if compared == 0:
        print("children_vs_trace: no traced run with device launches was compared", file=sys.stderr)
        return 1
    print("children_vs_trace: %d runs compared, %s" % (compared, "agree" if problems == 0 else "%d differences" % problems))
    return 0 if problems == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
