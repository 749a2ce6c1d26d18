"""Scratch trees for the tests of scripts/results: made-up benchmark documents (cdpkit-bench/1,
docs/bench-format.md) rendered into a page of results blocks, as the docs' pages are."""
import json
import os
import shutil
import subprocess
import sys


def bench_row(family, inp, variant, baseline, ms, launches, unit, params=None):
    """One row of a benchmark document, timed at `ms` and verified; its traced run launched
    `launches` child grids."""
    return {"family": family, "input": inp, "variant": variant, "baseline": baseline,
            "ms_median": ms, "ms_min": ms, "reps": 5, "throughput": 1.0,
            "throughput_unit": unit, "verified": True, "params": params or {},
            "trace": {"child_launches": launches}}


def bench_document(rows, commit, gpu, created):
    """A benchmark document of `rows`, made by `commit` on a GPU named `gpu` at `created`."""
    return {"schema": "cdpkit-bench/1", "commit": commit, "created": created,
            "device": {"name": gpu, "cc": "9.0", "sms": 132, "driver": 13000, "runtime": 13000},
            "rows": rows}


def render(src, scratch, who, docs, blocks):
    """Write `docs` (file name -> document) into scratch/docs/results/data and a page holding the
    results blocks named in `blocks`, render it with src's scripts/results, and return the page's
    text. The scratch tree is made anew; a failure of scripts/results exits, naming `who`."""
    shutil.rmtree(scratch, ignore_errors=True)
    data = os.path.join(scratch, "docs", "results", "data")
    os.makedirs(data)
    for name, doc in docs.items():
        with open(os.path.join(data, name), "w") as f:
            json.dump(doc, f)
    page = os.path.join(scratch, "docs", "page.md")
    with open(page, "w") as f:
        f.write("# page\n" + "".join(f"\n<!-- results:{b} -->\n<!-- /results:{b} -->\n" for b in blocks))
    run = subprocess.run([sys.executable, os.path.join(src, "scripts", "results"), "--root", scratch],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{who}: scripts/results failed ({run.returncode}): {run.stderr}")
    with open(page) as f:
        return f.read()
