#!/usr/bin/env bash
# The layout check of check_report.sh fails on planted faults: a page with an axis title over a
# tick label, and one wider than a phone's window. A stand-in for cdpkit-report writes each page.
# Usage: check_layout_planted.sh <output dir>. Exit 77 (skip) without Chromium.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || {
  echo "SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 77
}
command -v python3 >/dev/null || { echo "SKIPPED: python3 is not installed"; exit 77; }
mkdir -p "$out"
sections='<h2>1. Summary</h2><h2>2. Child grids</h2><h2>3. Launch tree</h2><h2>4. Pending launches</h2><h2>5. Divergence</h2><h2>6. Findings</h2>'
planted() {  # $1: name, $2: body after the sections, $3: the message expected
  local tool="$out/$1-tool.sh"
  printf '#!/bin/sh\ncat > "$3" <<"PAGE"\n<html><body>%s%s</body></html>\nPAGE\n' "$sections" "$2" > "$tool"
  chmod +x "$tool"
  if bash "$here/check_report.sh" "$tool" unused "$out/$1" > "$out/$1.log" 2>&1; then
    echo "FAILED: the layout check passed a page with $1" >&2
    exit 1
  fi
  grep -q "$3" "$out/$1.log" || { echo "FAILED: the message for $1 does not say '$3':" >&2; cat "$out/$1.log" >&2; exit 1; }
  echo "refused as expected: $(grep FAILED "$out/$1.log")"
}
planted overlap '<svg width="200" height="100"><text class="al" x="10" y="50">Title</text><text x="12" y="50">1234567</text></svg>' \
  'the axis title &quot;Title&quot; overlaps &quot;1234567&quot;'
planted overflow '<div style="width:2000px">a table too wide</div>' 'px wide in a 600 px window'
