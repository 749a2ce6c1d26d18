#!/usr/bin/env python3
"""The summary's source line names each benchmark file once, grouped by the commit that made it,
and the machine once where every file was measured on the same one; files from different
machines name theirs in their group.

On made-up Bézier and SpMV documents in a scratch tree: first from two commits on one GPU (one
"on GPU A" and both commits), then from two GPUs (each group naming its own GPU, none named
before the groups).

Usage: check_results_sources.py <source_dir> <scratch_dir>
"""
import json
import os
import shutil
import subprocess
import sys


def rows(family, inp, yard, cdp, unit):
    def row(variant, ms, launches):
        return {"family": family, "input": inp, "variant": variant, "baseline": yard,
                "ms_median": ms, "ms_min": ms, "reps": 5, "throughput": 1.0,
                "throughput_unit": unit, "verified": True, "params": {},
                "trace": {"child_launches": launches}}
    return [row(yard, 1.0, 0), row(cdp, 0.9, 3)]


def document(rows_of, commit, gpu, created):
    return {"schema": "cdpkit-bench/1", "commit": commit, "created": created,
            "device": {"name": gpu, "cc": "9.0", "sms": 132, "driver": 13000, "runtime": 13000},
            "rows": rows_of}


def source_line(src, scratch, docs):
    shutil.rmtree(scratch, ignore_errors=True)
    data = os.path.join(scratch, "docs", "results", "data")
    os.makedirs(data)
    for name, doc in docs.items():
        with open(os.path.join(data, name), "w") as f:
            json.dump(doc, f)
    page = os.path.join(scratch, "docs", "page.md")
    with open(page, "w") as f:
        f.write("# page\n\n<!-- results:families -->\n<!-- /results:families -->\n")
    run = subprocess.run([sys.executable, os.path.join(src, "scripts", "results"), "--root", scratch],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_results_sources: scripts/results failed ({run.returncode}): {run.stderr}")
    text = open(page).read()
    line = next((l for l in text.splitlines() if l.startswith("Source")), None)
    if line is None:
        sys.exit("check_results_sources: no source line in the summary:\n" + text)
    return line


def expect(ok, what, line):
    if not ok:
        sys.exit(f"check_results_sources: {what}:\n{line}")


def main():
    src, scratch = sys.argv[1], os.path.join(sys.argv[2], "results_sources")
    bezier = rows("bezier", "random:2^20", "flat_balanced", "warp_aggregated", "Gpoints/s")
    spmv = rows("spmv", "rmat:22", "cusparse", "block_aggregated", "Gnnz/s")

    line = source_line(src, scratch, {
        "bezier_bench.json": document(bezier, "aaaaaaa", "GPU A", "2026-01-01T00:00:00Z"),
        "spmv_bench.json": document(spmv, "bbbbbbb", "GPU A", "2026-01-02T00:00:00Z")})
    expect(line.count("GPU A") == 1, "one machine for both files should be named once", line)
    expect(line.startswith("Source, in `docs/results/data/` on GPU A (cc 9.0, 132 SMs)"),
           "the shared machine should lead the line", line)
    expect("`bezier_bench.json`: commit `aaaaaaa`, 2026-01-01T00:00:00Z" in line,
           "the Bézier file should be named with its commit and date", line)
    expect("`spmv_bench.json`: commit `bbbbbbb`, 2026-01-02T00:00:00Z" in line,
           "the SpMV file should be named with its commit and date", line)

    line = source_line(src, scratch, {
        "bezier_bench.json": document(bezier, "aaaaaaa", "GPU A", "2026-01-01T00:00:00Z"),
        "spmv_bench.json": document(spmv, "aaaaaaa", "GPU B", "2026-01-02T00:00:00Z")})
    expect(line.count("GPU A") == 1 and line.count("GPU B") == 1,
           "each machine should be named once, in its group", line)
    expect(" on GPU" not in line, "no machine should lead the line when two were used", line)
    expect(line.count("commit `aaaaaaa`") == 2, "each group should name its commit", line)
    print("check_results_sources: ok")


if __name__ == "__main__":
    main()
