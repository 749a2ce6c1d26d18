#!/usr/bin/env python3
"""scripts/bench-compare matches rows by family, input (files by base name), variant and chosen
parameters; calls a change a regression only when it is slower past the threshold and outside
the recorded noise, or when a verified row no longer verifies; and refuses what is not a
cdpkit-bench/1 document.

Usage: check_bench_compare.py <source_dir> <scratch_dir>
"""
import copy
import json
import os
import shutil
import subprocess
import sys


def row(variant, ms, inp="rmat:20", mad=None, verified=True, **params):
    r = {"family": "bfs", "input": inp, "variant": variant, "baseline": "serial_loop", "ms_median": ms,
         "ms_min": ms, "reps": 5, "throughput": 1.0, "throughput_unit": "GTEPS", "verified": verified,
         "params": params}
    if mad is not None:
        r["ms_mad"] = mad
    return r


def doc(rows, commit):
    return {"schema": "cdpkit-bench/1", "commit": commit, "created": "2026-01-01T00:00:00Z",
            "device": {"name": "made-up GPU"}, "rows": rows}


def main():
    src, scratch = sys.argv[1], os.path.join(sys.argv[2], "bench_compare")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    tool = os.path.join(src, "scripts", "bench-compare")
    old_rows = [row("serial_loop", 10.0, mad=0.1),
                row("thresholded", 2.0, mad=0.02, threshold=255, threshold_auto=True),  # chosen T
                row("thresholded", 3.0, mad=0.03, threshold=64),                          # a sweep row
                row("warp_aggregated", 1.0, mad=0.4),                                     # noisy
                row("block_aggregated", 1.0, mad=0.001),
                row("flat_balanced", 1.0, inp="graph:/old/place/g.txt", mad=0.01),
                row("device_driver", 1.0, mad=0.01)]
    new_rows = copy.deepcopy(old_rows)
    new_rows[1]["params"]["threshold"] = 511       # another chosen T: still the same row
    new_rows[1]["ms_median"] = new_rows[1]["ms_min"] = 2.6   # 1.3x, noise 1%: a regression
    new_rows[2]["ms_median"] = new_rows[2]["ms_min"] = 2.4   # 0.8x: faster
    new_rows[3]["ms_median"] = new_rows[3]["ms_min"] = 1.3   # 1.3x but noise 40%: within it
    new_rows[4]["ms_median"] = new_rows[4]["ms_min"] = 1.03  # 1.03x outside the noise, under 5%
    new_rows[5]["input"] = "graph:/new/place/g.txt"          # same file, another folder
    new_rows[6]["verified"] = False                          # no longer verified
    paths = {}
    for name, d in (("old", doc(old_rows, "a")), ("new", doc(new_rows, "b")), ("same", doc(old_rows, "c")),
                    ("bad", {"schema": "cdpkit-bench/2", "rows": []})):
        paths[name] = os.path.join(scratch, name + ".json")
        with open(paths[name], "w") as f:
            json.dump(d, f)

    def run(*args):
        p = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    def fail(what, out):
        sys.exit(f"check_bench_compare: {what}\n{out}")

    rc, out, _ = run(paths["old"], paths["same"])
    if rc != 0 or "7 rows matched: 0 faster, 0 slower, 7 within noise; 0 regression(s)" not in out:
        fail(f"identical rows: exit {rc}", out)
    rc, out, _ = run(paths["old"], paths["new"], "--all")
    if rc != 1:
        fail(f"a regression should exit 1, got {rc}", out)
    lines = {l.split()[2] + (" " + l.split()[3] if l.split()[2] == "thresholded" else ""): l
             for l in out.splitlines() if l.startswith("bfs ")}
    expect = {"thresholded T": "REGRESSION", "warp_aggregated": "within noise", "block_aggregated": "slower",
              "flat_balanced": "within noise", "device_driver": "REGRESSION (no longer verified)"}
    for key, verdict in expect.items():
        line = next((l for k, l in lines.items() if k.startswith(key)), None)
        if line is None or not line.rstrip().endswith(verdict):
            fail(f"{key}: expected '{verdict}'", out)
    sweep = next((l for l in out.splitlines() if " T=64 " in l), "")
    if not sweep.rstrip().endswith("faster"):
        fail("the T=64 sweep row should be faster", out)
    if any(l.startswith("only in") for l in out.splitlines()) or "2 regression(s)" not in out:
        fail("every row should match (the chosen T and the moved file too), 2 regressions", out)
    rc, out, _ = run(paths["old"], paths["new"], "--threshold", "0.5")
    if rc != 1 or "1 regression(s)" not in out:  # 1.3x is under 1.5; the unverified row stays one
        fail(f"--threshold 0.5: expected 1 regression, exit 1; got {rc}", out)
    rc, _, err = run(paths["old"], paths["bad"])
    if rc != 2 or "cdpkit-bench/2" not in err:
        fail(f"another schema should exit 2 naming it, got {rc}", err)
    rc, _, err = run(paths["old"], os.path.join(scratch, "missing.json"))
    if rc != 2 or "missing.json: cannot be read" not in err:
        fail(f"a missing file should exit 2 naming it, got {rc}", err)
    # The timing floor: a short row 1.2x slower by 10 us, with a spread of 1%, is within the noise
    # when a document's floor is 10 us (1% + 10 us / 50 us = 21%), and a regression without one;
    # a long row 1.2x slower is one either way. A floor that is not a time is refused.
    short_old = [row("serial_loop", 0.05, mad=0.0005), row("device_driver", 5.0, mad=0.05)]
    short_new = copy.deepcopy(short_old)
    short_new[0]["ms_median"] = short_new[0]["ms_min"] = 0.06
    short_new[1]["ms_median"] = short_new[1]["ms_min"] = 6.0
    floored = doc(short_new, "e")
    floored["timing_floor"] = {"what": "made up", "ms_median": 0.01, "ms_min": 0.009, "ms_mad": 0.001, "reps": 200}
    bad_floor = doc(short_new, "f")
    bad_floor["timing_floor"] = {"ms_median": "fast"}
    for name, d in (("short_old", doc(short_old, "d")), ("short_new", doc(short_new, "e")),
                    ("floored", floored), ("bad_floor", bad_floor)):
        paths[name] = os.path.join(scratch, name + ".json")
        with open(paths[name], "w") as f:
            json.dump(d, f)
    rc, out, _ = run(paths["short_old"], paths["short_new"])
    if rc != 1 or "2 regression(s)" not in out or "in neither document" not in out:
        fail(f"without a floor both 1.2x rows regress: got exit {rc}", out)
    rc, out, _ = run(paths["short_old"], paths["floored"], "--all")
    short = next((l for l in out.splitlines() if " serial_loop " in l), "")
    long_ = next((l for l in out.splitlines() if " device_driver " in l), "")
    if rc != 1 or not short.rstrip().endswith("within noise") or not long_.rstrip().endswith("REGRESSION") \
            or "10.0 us new" not in out:
        fail(f"with a 10 us floor the 0.05 ms row is within the noise, the 5 ms row regresses: exit {rc}", out)
    rc, _, err = run(paths["short_old"], paths["bad_floor"])
    if rc != 2 or "timing_floor.ms_median is 'fast'" not in err:
        fail(f"a floor that is not a time should exit 2 naming it, got {rc}", err)
    print("check_bench_compare: ok")


if __name__ == "__main__":
    main()
