#!/usr/bin/env bash
# check_inject_signal.sh <small_cdp> <cdpkit> <workdir> <segv|term>
#
# A program stopped by a signal under `cdpkit profile` still leaves its profile: small_cdp does its
# work, then crashes (segv: a null write) or is sent SIGTERM (term). The front door must exit with
# 128 + N, say the program was killed by the signal, and write NAME.json and NAME.html; the profile
# must say it is incomplete (collector.incomplete names the signal) and hold the work done before
# it (cdp_parent's range, its children's CTAs counted); the report must open with it.
# Exit 0 pass, 1 fail, 77 skip (no usable GPU, or profiling not permitted on this machine).
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 <small_cdp> <cdpkit> <workdir> <segv|term>" >&2
  exit 1
fi
program=$1 front_door=$2 work=$3 mode=$4
case $mode in
  segv) sig=11 name=SIGSEGV ;;
  term) sig=15 name=SIGTERM ;;
  *) echo "unknown mode $mode" >&2; exit 1 ;;
esac
if command -v nvidia-smi >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skip: nvidia-smi -L fails: no usable GPU"
  exit 77
fi
mkdir -p "$work" || exit 1
stem=$work/signal_$mode
log=$work/signal_$mode.log
rm -f "$stem.json" "$stem.html"
lock=()
command -v flock >/dev/null 2>&1 && lock=(flock /tmp/cdpkit-cupti-tests.lock)
ulimit -c 0
env -u CUDA_INJECTION64_PATH -u CDPKIT_PROFILE_OUT -u CDPKIT_COLLECT \
  "${lock[@]}" "$front_door" profile -o "$stem" --collect metrics -- "$program" 1 "$mode" >"$log" 2>&1
rc=$?
cat "$log"
if [ $rc -eq 77 ] || grep -q "small_cdp: no usable CUDA device" "$log"; then
  echo "skip: the program found no usable CUDA device"
  exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
[ $rc -eq $((128 + sig)) ] || fail "cdpkit profile exited with $rc, not $((128 + sig)) (128 + $name)"
grep -q "was killed by signal $sig ($name)" "$log" || fail "no line saying the program was killed by $name"
grep -q "incomplete: the program was stopped by signal $sig ($name)" "$log" ||
  fail "the front door did not say the profile is incomplete"
[ -s "$stem.json" ] || fail "no profile $stem.json"
[ -s "$stem.html" ] || fail "no report $stem.html"
grep -q "Incomplete profile" "$stem.html" || fail "the report does not open with the profile being incomplete"
python3 - "$stem.json" "$name" <<'PY' || exit $?
import json, sys
doc = json.load(open(sys.argv[1]))
collector = doc.get("collector") or {}
def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)
for n in collector.get("notes") or []:
    print("note: " + n)
if sys.argv[2] not in (collector.get("incomplete") or ""):
    fail("collector.incomplete is %r, not naming %s" % (collector.get("incomplete"), sys.argv[2]))
ctas = [((r.get("hardware") or {}).get("metrics") or {}).get("sm__ctas_launched.sum")
        for r in doc.get("runs") or [] if "cdp_parent" in r.get("variant", "")]
if not [c for c in ctas if c is not None]:
    if any("permission" in n or "INSUFFICIENT_PRIVILEGES" in n for n in collector.get("notes") or []):
        print("skip: CUPTI profiling is not permitted on this machine")
        sys.exit(77)
    fail("no measured run for cdp_parent: the work before the signal is missing")
if not any(c is not None and c >= 2 + 16 * 4 for c in ctas):
    fail("cdp_parent's range counts %s CTAs, fewer than its 2 blocks and 16 x 4 child blocks" % ctas)
print("profile ok: incomplete %r, cdp_parent CTAs %s" % (collector["incomplete"], ctas))
PY
echo "ok: $stem.json and $stem.html, marked incomplete after $name"
