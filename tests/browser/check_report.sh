#!/usr/bin/env bash
# Browser test of the HTML report: generate it from a fixture, open it in headless Chromium,
# fail on any console message (the page logs nothing when healthy), check that the static
# sections rendered, and save a screenshot as a build artifact.
# Usage: check_report.sh <cdpkit-report> <profile.json> <output dir>. Exit 77 (skip) without Chromium.
set -euo pipefail
tool=$1 fixture=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 77
fi
mkdir -p "$out"
"$tool" "$fixture" -o "$out/report.html"
profile_dir=$(mktemp -d)
trap 'rm -rf "$profile_dir"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$profile_dir" --hide-scrollbars
       --enable-logging=stderr --v=0)
timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$out/report.html" > "$out/report.dom.html" 2> "$out/chromium.log"
if grep -E ":CONSOLE" "$out/chromium.log"; then
  echo "FAILED: the report logged to the console" >&2
  exit 1
fi
for section in "1. Summary" "2. Child grids" "3. Launch tree" "4. Pending launches" "5. Divergence" "6. Findings"; do
  grep -q "$section" "$out/report.dom.html" || { echo "FAILED: section '$section' missing from the DOM" >&2; exit 1; }
done
timeout 60 "$browser" "${flags[@]}" --window-size=1200,2400 --screenshot="$out/report_screenshot.png" \
  "file://$out/report.html" 2>> "$out/chromium.log" > /dev/null
test -s "$out/report_screenshot.png"
echo "report rendered; screenshot: $out/report_screenshot.png"
