#!/usr/bin/env python3
"""scripts/results names as a family's best CDP variant only a row whose traced run launched a
child grid, and writes a threshold no list reaches (UINT32_MAX) as "T=never".

On a made-up Bézier document in a scratch tree: block_aggregated is the fastest CDP row, but its
automatic threshold came out UINT32_MAX and its trace counts no child launch; warp_aggregated
launched three. The summary must name warp_aggregated (0.80x flat_balanced's), and the flat table
must show block_aggregated's threshold as "T=never auto".

Usage: check_results_best_cdp.py <source_dir> <scratch_dir>
"""
import os
import sys

from results_scratch import bench_document, bench_row, render


def row(variant, ms, launches, threshold=None):
    params = None if threshold is None else {"threshold": threshold, "threshold_auto": True}
    return bench_row("bezier", "random:2^20", variant, "flat_balanced", ms, launches, "Gpoints/s", params)


def main():
    src, scratch = sys.argv[1], os.path.join(sys.argv[2], "results_best_cdp")
    doc = bench_document([row("flat_balanced", 1.0, 0), row("block_aggregated", 0.5, 0, 2**32 - 1),
                          row("warp_aggregated", 0.8, 3, 4095)], "0000000", "made-up GPU",
                         "2026-01-01T00:00:00Z")
    text = render(src, scratch, "check_results_best_cdp", {"bezier_bench.json": doc}, ["families", "bezier"])
    bezier = next((l for l in text.splitlines() if l.startswith("| [Bézier")), None)
    if bezier is None:
        sys.exit("check_results_best_cdp: no Bézier line in the summary:\n" + text)
    if "`warp_aggregated` (T=4095 auto)" not in bezier or "0.80x `flat_balanced`'s" not in bezier:
        sys.exit("check_results_best_cdp: the summary should name warp_aggregated at 0.80x, not "
                 "a row that launched nothing:\n" + bezier)
    if "T=never auto" not in text or "4294967295" in text:
        sys.exit("check_results_best_cdp: UINT32_MAX should read T=never:\n" + text)
    print("check_results_best_cdp: ok")


if __name__ == "__main__":
    main()
