#!/usr/bin/env python3
"""scripts/results names as a family's best CDP variant only a row whose traced run launched a
child grid, and writes a threshold no list reaches (UINT32_MAX) as "T=never".

On a made-up Bézier document in a scratch tree: block_aggregated is the fastest CDP row, but its
automatic threshold came out UINT32_MAX and its trace counts no child launch; warp_aggregated
launched three. The summary must name warp_aggregated (0.80x flat_balanced's), and the flat table
must show block_aggregated's threshold as "T=never auto".

Usage: check_results_best_cdp.py <source_dir> <scratch_dir>
"""
import json
import os
import shutil
import subprocess
import sys


def row(variant, ms, launches, threshold=None):
    params = {} if threshold is None else {"threshold": threshold, "threshold_auto": True}
    return {"family": "bezier", "input": "random:2^20", "variant": variant,
            "baseline": "flat_balanced", "ms_median": ms, "ms_min": ms, "reps": 5, "throughput": 1.0,
            "throughput_unit": "Gpoints/s", "verified": True, "params": params,
            "trace": {"child_launches": launches}}


def main():
    src, scratch = sys.argv[1], os.path.join(sys.argv[2], "results_best_cdp")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(os.path.join(scratch, "docs", "results", "data"))
    doc = {"schema": "cdpkit-bench/1", "commit": "0000000", "created": "2026-01-01T00:00:00Z",
           "device": {"name": "made-up GPU"},
           "rows": [row("flat_balanced", 1.0, 0), row("block_aggregated", 0.5, 0, 2**32 - 1),
                    row("warp_aggregated", 0.8, 3, 4095)]}
    with open(os.path.join(scratch, "docs", "results", "data", "bezier_bench.json"), "w") as f:
        json.dump(doc, f)
    page = os.path.join(scratch, "docs", "page.md")
    with open(page, "w") as f:
        f.write("# page\n\n<!-- results:families -->\n<!-- /results:families -->\n\n"
                "<!-- results:bezier -->\n<!-- /results:bezier -->\n")
    run = subprocess.run([sys.executable, os.path.join(src, "scripts", "results"), "--root", scratch],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_results_best_cdp: scripts/results failed ({run.returncode}): {run.stderr}")
    text = open(page).read()
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
