#!/usr/bin/env bash
# The committed full collection (tests/fixtures/profile_h100.json: loop_to_child under
# --collect all on an H100, every section filled) renders as a report with every hardware section.
# Usage: check_full_report.sh <cdpkit-report> <profile> <scratch_dir>
set -uo pipefail
report=$1 profile=$2 out=$3/full_collection.html
mkdir -p "$3"
"$report" "$profile" -o "$out" || { echo "check_full_report: cdpkit-report failed on $profile" >&2; exit 1; }
for section in "Child grids" "Launch tree" "Hardware vs probes" "CTA accounting" "SM activity over time" \
               "Collection overhead" "Findings"; do
  grep -q ">[0-9]*\. $section<" "$out" || { echo "check_full_report: section '$section' missing from $out" >&2; exit 1; }
done
echo "check_full_report: ok"
