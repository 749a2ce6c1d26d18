#!/usr/bin/env python3
"""children_pairing.py — how well ways of pairing launch calls with grids find each grid's parent.

The children collector (profiling/children) sees a program's device launch calls and its grids,
but nothing that names both; it pairs them (cdpkit/children/grids.hpp). This scores ways of
pairing against the program's own account of who launched whom:

  CDPKIT_CHILDREN_RAW=raw.jsonl CDP_WORKLOADS_TRUTH=truth.jsonl \\
  CUDA_INJECTION64_PATH=$PWD/build/release/profiling/children/libcdpkit_children.so \\
    build/release/tests/inject/cdp_workloads quadtree 65536
  bench/probes/children_pairing.py raw.jsonl truth.jsonl

raw.jsonl: the collector's rows ({"grid", "kernel", "host", "blocks", "first_ns", "last_ns"} and
{"call_from", "caller", "offset", "child", "t_ns", "sm"}); truth.jsonl: the workload's
({"grid", "parent", "depth"}). For each way it prints the share of device grids given their true
parent, and how the true order of ids relates to the calls' times (is the k-th grid by id the
k-th call's?), to the grids' starts, and to the calls' times within one SM (does the runtime
number each SM's launches in their order?).
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def pair_in_orders(grids, calls, grid_key, call_key):
    """Per child kernel: grids sorted by grid_key with calls sorted by call_key, one to one."""
    by_kernel_g, by_kernel_c = defaultdict(list), defaultdict(list)
    for g in grids:
        by_kernel_g[g["kernel"]].append(g)
    for c in calls:
        by_kernel_c[c["child"]].append(c)
    parent = {}
    for kernel, gs in by_kernel_g.items():
        cs = sorted(by_kernel_c.get(kernel, []), key=call_key)
        for g, c in zip(sorted(gs, key=grid_key), cs):
            parent[g["grid"]] = c["call_from"]
    return parent


def disorder(values):
    """The share of pairs (i < j) with values[i] > values[j]: inversions counted by merge sort."""
    def sort_count(v):
        if len(v) <= 1:
            return v, 0
        mid = len(v) // 2
        left, a = sort_count(v[:mid])
        right, b = sort_count(v[mid:])
        merged, inversions, i, j = [], a + b, 0, 0
        while i < len(left) and j < len(right):
            if right[j] < left[i]:
                merged.append(right[j])
                inversions += len(left) - i
                j += 1
            else:
                merged.append(left[i])
                i += 1
        merged += left[i:] + right[j:]
        return merged, inversions
    n = len(values)
    return sort_count(list(values))[1] / max(1, n * (n - 1) // 2)


def first_free_before_start(grids, calls):
    """Per child kernel: grids by start, each taking the earliest free call made before it."""
    by_kernel_g, by_kernel_c = defaultdict(list), defaultdict(list)
    for g in grids:
        by_kernel_g[g["kernel"]].append(g)
    for c in calls:
        by_kernel_c[c["child"]].append(c)
    parent = {}
    for kernel, gs in by_kernel_g.items():
        cs = sorted(by_kernel_c.get(kernel, []), key=lambda c: c["t_ns"])
        ready, nxt = [], 0
        for g in sorted(gs, key=lambda g: g["first_ns"]):
            while nxt < len(cs) and cs[nxt]["t_ns"] <= g["first_ns"]:
                ready.append(cs[nxt])
                nxt += 1
            if ready:
                c = ready.pop(0)
            elif nxt < len(cs):
                c = cs[nxt]
                nxt += 1
            else:
                continue
            parent[g["grid"]] = c["call_from"]
    return parent


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: children_pairing.py raw.jsonl truth.jsonl")
    rows = load(sys.argv[1])
    truth = {t["grid"]: t["parent"] for t in load(sys.argv[2])}
    grids = [r for r in rows if "grid" in r and not r["host"]]
    calls = [r for r in rows if "call_from" in r]
    print(f"{len(grids)} device grids, {len(calls)} launch calls, {len(truth)} grids in the truth")
    as_signed = lambda g: g["grid"] - (1 << 64) if g["grid"] >= 1 << 63 else g["grid"]
    ways = {
        "ids downward, calls by time (the collector's)": pair_in_orders(grids, calls, lambda g: -as_signed(g), lambda c: c["t_ns"]),
        "grids by start, calls by time": pair_in_orders(grids, calls, lambda g: g["first_ns"], lambda c: c["t_ns"]),
        "first free call before the start": first_free_before_start(grids, calls),
    }
    known = [g for g in grids if g["grid"] in truth]
    for name, parent in ways.items():
        right = sum(1 for g in known if parent.get(g["grid"]) == truth[g["grid"]])
        print(f"{name}: {right} of {len(known)} grids given their true parent ({100.0 * right / max(1, len(known)):.1f}%)")
    # the true order: for each parent, are its children's ids in the order of its calls' times?
    calls_of = defaultdict(list)
    for c in calls:
        calls_of[c["call_from"]].append(c["t_ns"])
    children_of = defaultdict(list)
    for g in known:
        children_of[truth[g["grid"]]].append(g)
    in_order = sum(1 for p, gs in children_of.items()
                   if [g["grid"] for g in sorted(gs, key=lambda g: -as_signed(g))] ==
                      [g["grid"] for g in sorted(gs, key=lambda g: g["first_ns"])])
    print(f"{in_order} of {len(children_of)} parents have their children's ids in the order their children started")

    # Which order does the device runtime number grids in? Take each grid's true call to be the
    # k-th call of its true parent that launches its kernel, k its rank among that parent's
    # children of the kernel by id (right where a parent's grids are numbered in its call order),
    # and count how far the grids by id are from their calls by time, and from their starts: the
    # share of pairs out of order (0: the same order, 0.5: unrelated).
    calls_by_parent = defaultdict(list)
    for c in calls:
        calls_by_parent[(c["call_from"], c["child"])].append(c)
    kids = defaultdict(list)
    for g in known:
        kids[(truth[g["grid"]], g["kernel"])].append(g)
    true_call = {}
    for key, gs in kids.items():
        cs = sorted(calls_by_parent.get(key, []), key=lambda c: c["t_ns"])
        for g, c in zip(sorted(gs, key=lambda g: -as_signed(g)), cs):
            true_call[g["grid"]] = c
    by_id = sorted((g for g in known if g["grid"] in true_call), key=lambda g: -as_signed(g))
    print(f"grids by id against their calls by time: {disorder([true_call[g['grid']]['t_ns'] for g in by_id]):.4f} "
          f"of pairs out of order ({len(by_id)} grids; each grid's call taken as its parent's k-th by time for its k-th "
          f"child by id, so within one parent the order agrees by construction, and a failed call may be among them)")
    print(f"grids by id against their starts: {disorder([g['first_ns'] for g in by_id]):.4f} of pairs out of order")
    if by_id and "sm" in true_call[by_id[0]["grid"]]:
        per_sm = defaultdict(list)
        for g in by_id:
            per_sm[true_call[g["grid"]]["sm"]].append(true_call[g["grid"]]["t_ns"])
        pairs = sum(len(v) * (len(v) - 1) // 2 for v in per_sm.values())
        wrong = sum(disorder(v) * (len(v) * (len(v) - 1) // 2) for v in per_sm.values())
        print(f"within the calls of one SM: {wrong / max(1, pairs):.4f} of pairs out of order ({len(per_sm)} SMs)")
    steps = sorted({b["t_ns"] - a["t_ns"] for a, b in zip(sorted(calls, key=lambda c: c["t_ns"]),
                                                            sorted(calls, key=lambda c: c["t_ns"])[1:])} - {0})
    if steps:
        print(f"the smallest step between two calls' times: {steps[0]} ns")


if __name__ == "__main__":
    main()
