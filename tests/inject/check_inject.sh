#!/usr/bin/env bash
# check_inject.sh <small_cdp> <libcdpkit_inject.so> <cdpkit-report> <workdir> <profile_schema> [<cdpkit>]
#
# Runs the unmodified CDP program small_cdp with libcdpkit_inject.so injected
# (CUDA_INJECTION64_PATH) and checks the profile it leaves: the current profile schema (the
# last argument, read by CMake from cdpkit/schema/profile.hpp), the parent's
# range counting its 2 blocks and its 16 children's 4 blocks each (>= 66 CTAs), the plain
# kernel's range exactly 10 CTAs (and its accounting 10 host blocks), both kernels in the host
# activity; then that cdpkit-report turns the profile into HTML. Exit 0 pass, 1 fail, 77 skip
# (no usable GPU, or profiling not permitted on this machine).
# With <cdpkit> (the front door, built or installed), the program is run as `cdpkit profile -o
# <workdir>/inject_profile -- <small_cdp>`, with no environment variable: the front door must find
# the injection library itself, pass the exit status through and write the report.
set -u

if [ $# -ne 5 ] && [ $# -ne 6 ]; then
  echo "usage: $0 <small_cdp> <libcdpkit_inject.so> <cdpkit-report> <workdir> <profile_schema> [<cdpkit>]" >&2
  exit 1
fi
program=$1
library=$2
report=$3
work=$4
front_door=${6:-}

if command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skip: nvidia-smi -L fails: no usable GPU"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "FAIL: python3 is needed for the JSON checks" >&2
  exit 1
fi

mkdir -p "$work" || exit 1
profile=$work/inject_profile.json
html=$work/inject_report.html
log=$work/small_cdp.log
rm -f "$profile" "$html" "$work/inject_profile.html"

# the GPU's profiling hardware serves one process at a time: take the lock the CUPTI test cases take
lock=()
command -v flock >/dev/null 2>&1 && lock=(flock /tmp/cdpkit-cupti-tests.lock)
if [ -n "$front_door" ]; then
  env -u CUDA_INJECTION64_PATH -u CDPKIT_PROFILE_OUT -u CDPKIT_COLLECT \
    "${lock[@]}" "$front_door" profile -o "$work/inject_profile" --collect metrics -- "$program" >"$log" 2>&1
else
  CUDA_INJECTION64_PATH=$library CDPKIT_PROFILE_OUT=$profile CDPKIT_COLLECT=metrics "${lock[@]}" "$program" >"$log" 2>&1
fi
rc=$?
cat "$log"
if [ $rc -eq 77 ] || grep -q "small_cdp: no usable CUDA device" "$log"; then
  echo "skip: the program found no usable CUDA device"
  exit 77
fi
if [ $rc -ne 0 ]; then
  echo "FAIL: small_cdp exited with $rc under the injection library (0 expected)" >&2
  exit 1
fi
if [ ! -f "$profile" ]; then
  echo "FAIL: no profile at $profile" >&2
  exit 1
fi

python3 - "$profile" "$5" <<'EOF'
import json, sys

path = sys.argv[1]
with open(path) as f:
    doc = json.load(f)

def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)

if doc.get("schema") != sys.argv[2]:
    fail("schema is %r, not %s" % (doc.get("schema"), sys.argv[2]))
runs = doc.get("runs") or []
notes = (doc.get("collector") or {}).get("notes") or []
for n in notes:
    print("note: " + n)

def ctas(run):
    hw = run.get("hardware") or {}
    return (hw.get("metrics") or {}).get("sm__ctas_launched.sum")

measured = [r for r in runs if ctas(r) is not None]
for r in runs:
    acc = (r.get("hardware") or {}).get("accounting")
    print("run %s: %s ctas=%s accounting=%s" % (r.get("id"), r.get("variant"), ctas(r), acc))
if not measured:
    if any("permission" in n or "INSUFFICIENT_PRIVILEGES" in n for n in notes):
        print("skip: CUPTI profiling is not permitted on this machine")
        sys.exit(77)
    fail("no run has hardware metrics")

parents = [r for r in measured if "cdp_parent" in r.get("variant", "")]
if not parents:
    fail("no run for cdp_parent")
if not any(ctas(r) >= 2 * 1 + 16 * 4 for r in parents):
    fail("cdp_parent's range counts %s CTAs, fewer than its 2 blocks and 16 x 4 child blocks"
         % [ctas(r) for r in parents])
plains = [r for r in measured if "plain_kernel" in r.get("variant", "")]
if not plains:
    fail("no run for plain_kernel")
if not any(round(ctas(r)) == 10 for r in plains):
    fail("plain_kernel's range counts %s CTAs, not 10" % [ctas(r) for r in plains])
for r in plains:
    acc = r["hardware"].get("accounting")
    if acc is None or acc.get("host_grids") != 1 or acc.get("host_blocks") != 10:
        fail("plain_kernel's accounting is %r, not 1 host grid of 10 blocks" % acc)
for r in runs:
    if r.get("algorithm") != "injected" or r.get("checked") or r.get("verified"):
        fail("run %s: algorithm %r checked %r verified %r" % (r.get("id"), r.get("algorithm"), r.get("checked"), r.get("verified")))

activity = doc.get("host_activity")
if not activity:
    fail("no host_activity")
names = activity.get("kernel_names") or []
kernels = [names[k[1]] for k in activity.get("kernels") or []]
for kernel in ("cdp_parent", "plain_kernel"):
    if not any(kernel in n for n in kernels):
        fail("host_activity has no %s kernel (it has %s)" % (kernel, sorted(set(kernels))))
print("profile ok: %d runs, %d host kernels" % (len(runs), len(kernels)))
EOF
rc=$?
if [ $rc -ne 0 ]; then
  exit $rc
fi

if [ -n "$front_door" ]; then
  if [ ! -s "$work/inject_profile.html" ] || ! grep -q "cdpkit profile: wrote" "$log"; then
    echo "FAIL: the front door wrote no report $work/inject_profile.html" >&2
    exit 1
  fi
  echo "ok: cdpkit profile wrote $profile and $work/inject_profile.html"
  exit 0
fi
if ! "$report" "$profile" -o "$html"; then
  echo "FAIL: cdpkit-report could not turn $profile into HTML" >&2
  exit 1
fi
if [ ! -s "$html" ]; then
  echo "FAIL: cdpkit-report left no $html" >&2
  exit 1
fi
echo "ok: $profile -> $html"
exit 0
