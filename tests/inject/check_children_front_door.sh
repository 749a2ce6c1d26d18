#!/usr/bin/env bash
# check_children_front_door.sh <cdpkit> <cdp_workloads> <small_cdp> <workdir>
#
# `cdpkit profile` with the children collector, from the front door, on programs built without
# cdpkit:
#   - --collect children on the quadtree workload: exit 0, NAME.json with one run "children" whose
#     trace counts the workload's device grids, NAME.html written;
#   - --collect all on the same: CUPTI's runs (one per host launch) and the children run in one
#     profile, the collector asked for both;
#   - --collect children on small_cdp crashing (SIGSEGV): exit 139, the profile written and marked
#     incomplete.
# Exit 0 pass, 1 fail, 77 skip (no usable GPU).
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 <cdpkit> <cdp_workloads> <small_cdp> <workdir>" >&2
  exit 1
fi
front_door=$1 workloads=$2 small_cdp=$3 work=$4
if command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skip: nvidia-smi -L fails: no usable GPU"
  exit 77
fi
mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
clean() { env -u CUDA_INJECTION64_PATH -u CDPKIT_PROFILE_OUT -u CDPKIT_COLLECT "$@"; }
lock=()
command -v flock >/dev/null 2>&1 && lock=(flock /tmp/cdpkit-cupti-tests.lock)

rm -f "$work"/children.* "$work"/all.* "$work"/crash.*
clean "$front_door" profile -o "$work/children" --collect children -- "$workloads" quadtree 65536 >"$work/children.log" 2>&1
rc=$?
cat "$work/children.log"
if grep -q "no usable CUDA device" "$work/children.log"; then echo "skip: no usable CUDA device"; exit 77; fi
[ $rc -eq 0 ] || fail "cdpkit profile --collect children exited with $rc"
[ -s "$work/children.html" ] || fail "no report $work/children.html"
grids=$(sed -n 's/.* device_grids=\([0-9]*\) .*/\1/p' "$work/children.log" | head -1)
[ -n "$grids" ] || fail "the workload printed no device_grids"
python3 - "$work/children.json" "$grids" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [r for r in doc["runs"] if r.get("variant") == "children"]
if len(runs) != 1: sys.exit("FAIL: %d children runs, not 1" % len(runs))
got = runs[0]["trace"]["summary"]["child_launches"]
if got != int(sys.argv[2]): sys.exit("FAIL: the profile counts %d device grids, the workload %s" % (got, sys.argv[2]))
print("ok: children run with %d device grids" % got)
PY

clean "${lock[@]}" "$front_door" profile -o "$work/all" --collect all -- "$workloads" quadtree 4096 >"$work/all.log" 2>&1
rc=$?
cat "$work/all.log"
[ $rc -eq 0 ] || fail "cdpkit profile --collect all exited with $rc"
grep -q "the program runs twice" "$work/all.log" || fail "the front door did not say the program runs twice"
python3 - "$work/all.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
variants = [r.get("variant") for r in doc["runs"]]
if variants.count("children") != 1: sys.exit("FAIL: runs %r hold not one children run" % variants)
if not any("quadtree_node" in (v or "") for v in variants): sys.exit("FAIL: no CUPTI run of quadtree_node in %r" % variants)
requested = doc["collector"]["requested"]
if "children" not in requested or "metrics" not in requested: sys.exit("FAIL: requested %r" % requested)
if [r["id"] for r in doc["runs"]] != list(range(len(doc["runs"]))): sys.exit("FAIL: run ids not 0..n-1")
print("ok: %d runs from both collectors" % len(variants))
PY

ulimit -c 0
clean "$front_door" profile -o "$work/crash" --collect children -- "$small_cdp" 1 segv >"$work/crash.log" 2>&1
rc=$?
cat "$work/crash.log"
[ $rc -eq 139 ] || fail "cdpkit profile exited with $rc after a SIGSEGV, not 139"
[ -s "$work/crash.json" ] || fail "no profile $work/crash.json after the crash"
python3 - "$work/crash.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
why = (doc.get("collector") or {}).get("incomplete") or ""
if "SIGSEGV" not in why: sys.exit("FAIL: the profile is not marked incomplete by SIGSEGV: %r" % why)
print("ok: incomplete: " + why)
PY
echo "ok: the front door's children collection"
