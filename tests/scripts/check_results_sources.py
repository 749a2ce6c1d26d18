#!/usr/bin/env python3
"""The summary's source line names each benchmark file once, grouped by the commit that made it,
and the machine once where every file was measured on the same one; files from different
machines name theirs in their group.

On made-up Bézier and SpMV documents in a scratch tree: first from two commits on one GPU (one
"on GPU A" and both commits), then from two GPUs (each group naming its own GPU, none named
before the groups).

Usage: check_results_sources.py <source_dir> <scratch_dir>
"""
import os
import sys

from results_scratch import bench_document, bench_row, render


def rows(family, inp, yard, cdp, unit):
    return [bench_row(family, inp, yard, yard, 1.0, 0, unit), bench_row(family, inp, cdp, yard, 0.9, 3, unit)]


def source_line(src, scratch, docs):
    text = render(src, scratch, "check_results_sources", docs, ["families"])
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
        "bezier_bench.json": bench_document(bezier, "aaaaaaa", "GPU A", "2026-01-01T00:00:00Z"),
        "spmv_bench.json": bench_document(spmv, "bbbbbbb", "GPU A", "2026-01-02T00:00:00Z")})
    expect(line.count("GPU A") == 1, "one machine for both files should be named once", line)
    expect(line.startswith("Source, in `docs/results/data/` on GPU A (cc 9.0, 132 SMs)"),
           "the shared machine should lead the line", line)
    expect("`bezier_bench.json`: commit `aaaaaaa`, 2026-01-01T00:00:00Z" in line,
           "the Bézier file should be named with its commit and date", line)
    expect("`spmv_bench.json`: commit `bbbbbbb`, 2026-01-02T00:00:00Z" in line,
           "the SpMV file should be named with its commit and date", line)

    line = source_line(src, scratch, {
        "bezier_bench.json": bench_document(bezier, "aaaaaaa", "GPU A", "2026-01-01T00:00:00Z"),
        "spmv_bench.json": bench_document(spmv, "aaaaaaa", "GPU B", "2026-01-02T00:00:00Z")})
    expect(line.count("GPU A") == 1 and line.count("GPU B") == 1,
           "each machine should be named once, in its group", line)
    expect(" on GPU" not in line, "no machine should lead the line when two were used", line)
    expect(line.count("commit `aaaaaaa`") == 2, "each group should name its commit", line)
    print("check_results_sources: ok")


if __name__ == "__main__":
    main()
