#!/usr/bin/env bash
# Browser test of the HTML report: generate it from a fixture, open it in headless Chromium,
# fail on any console message (the page logs nothing when healthy), check that the static
# sections rendered and that the layout holds at 600 and 1,400 px, and save a screenshot at each
# width as a build artifact.
# Usage: check_report.sh <cdpkit-report> <profile.json> <output dir>. Exit 77 (skip) without Chromium.
set -euo pipefail
tool=$1 fixture=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium)"
  exit 77
fi
command -v python3 >/dev/null || { echo "SKIPPED: python3 is not installed (the layout probe is written with it)"; exit 77; }
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
for section in "Summary" "Child grids" "Launch tree" "Pending launches" "Divergence" "Findings"; do
  grep -Eq "[0-9]+\. $section<" "$out/report.dom.html" ||
    { echo "FAILED: section '$section' missing from the DOM" >&2; exit 1; }
done
# The layout at a phone's width and a desktop's: the page never scrolls sideways (wide tables scroll
# inside their own box), and no axis title overlaps another label of its chart (the tick labels
# above all). A copy of the report measures itself (getBoundingClientRect) at the end of its body
# and writes what it found into an attribute of <body>, which --dump-dom shows.
python3 - "$out/report.html" "$out/report.layout.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>(function () {
  var problems = [];
  var root = document.documentElement;
  if (root.scrollWidth > window.innerWidth + 1)
    problems.push('the page is ' + root.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  document.querySelectorAll('svg').forEach(function (svg, i) {
    var texts = Array.prototype.slice.call(svg.querySelectorAll('text'));
    texts.filter(function (t) { return t.classList.contains('al'); }).forEach(function (al) {
      var a = al.getBoundingClientRect();
      texts.forEach(function (t) {
        if (t === al) return;
        var b = t.getBoundingClientRect();
        var ix = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        var iy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (ix > 0.5 && iy > 0.5)
          problems.push('chart ' + i + ': the axis title "' + al.textContent + '" overlaps "' + t.textContent + '"');
      });
    });
  });
  document.body.setAttribute('data-layout', problems.length ? problems.join(' | ') : 'ok');
})();</script>"""
at = page.rfind("</body>")
if at < 0:
    sys.exit("check_report.sh: the report has no </body>")
open(sys.argv[2], "w", encoding="utf-8").write(page[:at] + probe + page[at:])
PY
for width in 600 1400; do
  timeout 60 "$browser" "${flags[@]}" --window-size=$width,2400 --dump-dom "file://$out/report.layout.html" \
    > "$out/report.layout.$width.html" 2>> "$out/chromium.log" ||
    { echo "FAILED: chromium did not render the page at $width px (see $out/chromium.log)" >&2; exit 1; }
  layout=$(grep -o 'data-layout="[^"]*"' "$out/report.layout.$width.html" || true)
  if [ "$layout" != 'data-layout="ok"' ]; then
    echo "FAILED: layout at $width px: ${layout:-no measurement (the probe did not run)}" >&2
    exit 1
  fi
  timeout 60 "$browser" "${flags[@]}" --window-size=$width,2400 --screenshot="$out/report_screenshot_$width.png" \
    "file://$out/report.html" 2>> "$out/chromium.log" > /dev/null ||
    { echo "FAILED: chromium did not take the screenshot at $width px (see $out/chromium.log)" >&2; exit 1; }
  test -s "$out/report_screenshot_$width.png"
done
echo "report rendered at 600 and 1400 px without overflow or overlapping labels; screenshots:"
echo "  $out/report_screenshot_600.png"
echo "  $out/report_screenshot_1400.png"
